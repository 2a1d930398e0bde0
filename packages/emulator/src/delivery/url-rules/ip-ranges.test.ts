import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  EMBEDDING_IPV6,
  embeddedIpv4,
  isLoopbackAddress,
  REACHABLE_IPV6,
  REFUSED_IPV4,
  REFUSED_IPV6,
  refusedRange,
} from './ip-ranges.js'

/** The package's README, found upwards from here (wherever this folder moves). */
function packageReadme(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return readFileSync(join(dir, 'README.md'), 'utf8')
}

describe('ip ranges', () => {
  it('embeddedIpv4 reads the IPv4 address of each carrying form', () => {
    expect(embeddedIpv4('::127.0.0.1')).toEqual({
      ipv4: '127.0.0.1',
      form: 'IPv4-compatible (deprecated)',
    })
    expect(embeddedIpv4('::7f00:1')?.ipv4).toBe('127.0.0.1')
    expect(embeddedIpv4('::ffff:c0a8:1')?.ipv4).toBe('192.168.0.1')
    expect(embeddedIpv4('::ffff:0:7f00:1')?.ipv4).toBe('127.0.0.1')
    expect(embeddedIpv4('64:ff9b::a9fe:a9fe')?.ipv4).toBe('169.254.169.254')
    expect(embeddedIpv4('2002:c000:0201::1')?.ipv4).toBe('192.0.2.1')
    // :: and ::1 are themselves; a global address carries nothing.
    expect(embeddedIpv4('::1')).toBeUndefined()
    expect(embeddedIpv4('::')).toBeUndefined()
    expect(embeddedIpv4('2606:4700::1111')).toBeUndefined()
  })

  it('refusedRange names the range, and nothing for a globally reachable address', () => {
    expect(refusedRange('100.64.0.1')).toBe(
      '100.64.0.0/10, shared address space (carrier-grade NAT)',
    )
    expect(refusedRange('fec0::1')).toBe('fec0::/10, site-local (deprecated)')
    expect(refusedRange('2001:db8::1')).toBe('2001:db8::/32, documentation')
    expect(refusedRange('::1')).toBe('::1/128, loopback')
    expect(refusedRange('1234::1')).toBe('::/0, outside the global unicast space 2000::/3')
    expect(refusedRange('2001:4:112::1')).toBeUndefined()
    expect(refusedRange('8.8.8.8')).toBeUndefined()
    expect(refusedRange('2a00:1450::1')).toBeUndefined()
  })

  it('isLoopbackAddress: 127/8, ::1 and IPv6 carrying 127/8', () => {
    for (const yes of [
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '::ffff:7f00:1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
    ]) {
      expect(isLoopbackAddress(yes), yes).toBe(true)
    }
    for (const no of ['10.0.0.1', '::', '::2', '::ffff:a00:1', 'fe80::1']) {
      expect(isLoopbackAddress(no), no).toBe(false)
    }
  })

  it("the emulator's README lists every range of the table", () => {
    const readme = packageReadme()
    const section = readme.slice(readme.indexOf('## Webhook URL rules'))
    for (const { cidr } of [
      ...REFUSED_IPV4,
      ...REFUSED_IPV6,
      ...EMBEDDING_IPV6,
      ...REACHABLE_IPV6,
    ]) {
      const bare = cidr.endsWith('/128') ? cidr.slice(0, -4) : cidr
      expect(section.includes(`\`${cidr}\``) || section.includes(`\`${bare}\``), cidr).toBe(true)
    }
  })
})
