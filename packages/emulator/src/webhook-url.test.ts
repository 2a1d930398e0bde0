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

  it('with allowLoopback, http and any port on loopback hosts only, never with credentials', () => {
    expect(checkWebhookUrl('http://localhost:3000/hooks', true).ok).toBe(true)
    expect(checkWebhookUrl('http://app.localhost:3000/hooks', true).ok).toBe(true)
    expect(checkWebhookUrl('http://127.0.0.2:1/hooks', true).ok).toBe(true)
    expect(checkWebhookUrl('https://[::1]:8443/hooks', true).ok).toBe(true)
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
