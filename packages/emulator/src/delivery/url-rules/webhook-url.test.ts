import { describe, expect, it } from 'vitest'
import { checkWebhookUrl, isLoopbackHost, isPrivateHost } from './webhook-url.js'

describe('checkWebhookUrl', () => {
  it('accepts a public https URL on port 443, written or implied', () => {
    expect(checkWebhookUrl('https://shop.example.com/hooks', false)).toEqual({
      ok: true,
      url: 'https://shop.example.com/hooks',
    })
    expect(checkWebhookUrl('https://shop.example.com:443/hooks', false).ok).toBe(true)
  })

  it('refuses with invalid_format what is not an https URL or is over 800 characters', () => {
    for (const url of [
      'http://shop.example.com/',
      'ftp://shop.example.com/',
      '/hooks',
      `https://a.com/${'x'.repeat(790)}`,
    ]) {
      expect(checkWebhookUrl(url, true)).toMatchObject({ ok: false, kind: 'invalid_format' })
    }
    expect(checkWebhookUrl(`https://a.com/${'x'.repeat(786)}`, false).ok).toBe(true)
  })

  it('counts the 800 characters on the URL as stored: 787 written characters that store as 1,547 are refused', () => {
    // Each é is stored as %C3%A9: six characters.
    const written = `https://a.com/${'é'.repeat(152)}${'x'.repeat(621)}`
    expect(written.length).toBe(787)
    const verdict = checkWebhookUrl(written, false)
    expect(verdict).toMatchObject({ ok: false, kind: 'invalid_format' })
    expect(!verdict.ok && verdict.reason).toContain('1547 as stored, from 787 as written')
  })

  it('at the edge with astral characters: stored at 800 accepted, 801 refused', () => {
    // 😀 is one character written, %F0%9F%98%80 (12) stored: 14 + 65 x 12 + 6 = 800.
    const edge = `https://a.com/${'😀'.repeat(65)}${'x'.repeat(6)}`
    const accepted = checkWebhookUrl(edge, false)
    expect(accepted.ok && accepted.url.length).toBe(800)
    expect(checkWebhookUrl(`${edge}x`, false)).toMatchObject({ ok: false, kind: 'invalid_format' })
  })

  it('refuses with url_not_allowed another port, credentials, private and internal hosts', () => {
    for (const url of [
      'https://shop.example.com:8443/',
      'https://me@shop.example.com/',
      'https://127.0.0.1/',
      'https://10.1.2.3/',
      'https://172.20.0.1/',
      'https://169.254.169.254/',
      'https://100.64.0.1/',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://[::ffff:192.168.0.1]/',
      'https://printer.local/',
      'https://db.internal/',
      'https://localhost/',
      // A trailing dot names the same host, fully qualified.
      'https://localhost./',
      'https://intranet./',
      'https://db.internal./',
      'https://app.localhost./',
    ]) {
      expect(checkWebhookUrl(url, false), url).toMatchObject({ ok: false, kind: 'url_not_allowed' })
    }
  })

  it('accepts public addresses carried in IPv6, and the globally reachable entries of 2001::/23', () => {
    for (const url of [
      'https://[64:ff9b::808:808]/',
      'https://[2002:808:808::1]/',
      'https://[::ffff:8.8.8.8]/',
      'https://[2001:4:112::1]/',
      'https://[2001:3::1]/',
      'https://[2606:4700::1111]/',
      'https://192.0.3.1/',
      'https://100.128.0.1/',
      'https://198.20.0.1/',
      'https://223.255.255.1/',
    ]) {
      expect(checkWebhookUrl(url, false), url).toMatchObject({ ok: true })
    }
  })

  it('names the range it refused, judging a carried IPv4 address by itself', () => {
    expect(checkWebhookUrl('https://[64:ff9b::7f00:1]/', false)).toMatchObject({
      reason: 'the host is a private or internal address (NAT64 127.0.0.1: 127.0.0.0/8, loopback)',
    })
    expect(checkWebhookUrl('https://198.51.100.7/', false)).toMatchObject({
      reason:
        'the host is a private or internal address (198.51.100.0/24, documentation (TEST-NET-2))',
    })
  })

  it('with allowLoopback, http and any port on loopback hosts only, never with credentials', () => {
    expect(checkWebhookUrl('http://localhost:3000/hooks', true).ok).toBe(true)
    expect(checkWebhookUrl('http://app.localhost:3000/hooks', true).ok).toBe(true)
    expect(checkWebhookUrl('http://127.0.0.2:1/hooks', true).ok).toBe(true)
    expect(checkWebhookUrl('https://[::1]:8443/hooks', true).ok).toBe(true)
    // Judged by the IPv4 address they carry: loopback.
    for (const host of [
      '[::127.0.0.1]',
      '[::ffff:127.0.0.1]',
      '[64:ff9b::7f00:1]',
      '[2002:7f00:1::1]',
      '[::ffff:0:7f00:1]',
    ]) {
      expect(checkWebhookUrl(`http://${host}:3000/hooks`, true).ok, host).toBe(true)
    }
    // Carrying a private address that is not loopback: no exception.
    expect(checkWebhookUrl('http://[::ffff:10.0.0.1]:3000/hooks', true)).toMatchObject({
      kind: 'invalid_format',
    })
    expect(checkWebhookUrl('http://192.168.1.5:3000/hooks', true)).toMatchObject({
      kind: 'invalid_format',
    })
    expect(checkWebhookUrl('http://a:b@localhost:3000/', true)).toMatchObject({
      kind: 'url_not_allowed',
    })
  })
})

describe('hosts', () => {
  it('isLoopbackHost: localhost names, 127/8 and ::1', () => {
    expect(
      ['localhost', 'x.localhost', '127.0.0.1', '127.9.9.9', '[::1]'].every(isLoopbackHost),
    ).toBe(true)
    expect(['example.com', '10.0.0.1', '[::2]', 'localhost.example.com'].some(isLoopbackHost)).toBe(
      false,
    )
  })

  it('isPrivateHost: public addresses and names are not private', () => {
    expect(
      ['8.8.8.8', 'example.com', 'example.com.', '[2606:4700::1111]', '172.32.0.1'].some(
        isPrivateHost,
      ),
    ).toBe(false)
  })
})
