import { isIP } from 'node:net'

/** An address range a webhook may not point into, and what it is for. */
export interface SpecialRange {
  /** `192.0.2.0/24`, `2001:db8::/32`. */
  cidr: string
  /** What the range is, in the IANA registry's words (shortened). */
  name: string
}

/**
 * IPv4 ranges refused as webhook targets: the IANA IPv4 special-purpose registry
 * (every entry not globally reachable), multicast and the reserved 240/4.
 */
export const REFUSED_IPV4: readonly SpecialRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network"' },
  { cidr: '10.0.0.0/8', name: 'private use' },
  { cidr: '100.64.0.0/10', name: 'shared address space (carrier-grade NAT)' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata services)' },
  { cidr: '172.16.0.0/12', name: 'private use' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', name: 'private use' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved, and the broadcast address' },
]

/**
 * IPv6 ranges refused as webhook targets. Anything outside the global unicast
 * space 2000::/3 is refused (loopback, unspecified, unique local, link-local,
 * site-local, multicast, discard-only, ...); the rows name the common ones. Inside
 * it, the special-purpose entries that are not globally reachable.
 */
export const REFUSED_IPV6: readonly SpecialRange[] = [
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs' },
  { cidr: 'fc00::/7', name: 'unique local' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', name: 'multicast' },
  // Checked after the rows above, and only outside 2000::/3.
  { cidr: '::/0', name: 'outside the global unicast space 2000::/3' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo, benchmarking, ORCHID)' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '3fff::/20', name: 'documentation' },
]

/** Inside 2001::/23, the entries IANA marks globally reachable: allowed. */
export const REACHABLE_IPV6: readonly SpecialRange[] = [
  { cidr: '2001:1::1/128', name: 'Port Control Protocol anycast' },
  { cidr: '2001:1::2/128', name: 'TURN anycast' },
  { cidr: '2001:1::3/128', name: 'DNS-SD service registration anycast' },
  { cidr: '2001:3::/32', name: 'AMT' },
  { cidr: '2001:4:112::/48', name: 'AS112-v6' },
  { cidr: '2001:20::/28', name: 'ORCHIDv2' },
  { cidr: '2001:30::/28', name: 'drone remote ID' },
]

/**
 * IPv6 forms that carry an IPv4 address, judged by that address: IPv4-compatible
 * `::a.b.c.d`, mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d` and 6to4 `2002:AABB:CCDD::`.
 */
export const EMBEDDING_IPV6: readonly (SpecialRange & { shift: bigint })[] = [
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', shift: 0n },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped', shift: 0n },
  { cidr: '::ffff:0:0:0/96', name: 'IPv4-translated', shift: 0n },
  { cidr: '64:ff9b::/96', name: 'NAT64', shift: 0n },
  { cidr: '2002::/16', name: '6to4', shift: 80n },
]

function ipv4Value(text: string): bigint {
  return text.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n)
}

function ipv6Value(text: string): bigint {
  let address = text.replace(/%.*$/, '').toLowerCase()
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1]
  if (dotted) {
    const v4 = ipv4Value(dotted)
    address = `${address.slice(0, -dotted.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const [head = '', tail] = address.split('::')
  const groups = (part: string) => (part === '' ? [] : part.split(':'))
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const all = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return all.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group, 16)), 0n)
}

const addressValue = (address: string, family: 4 | 6) =>
  family === 4 ? ipv4Value(address) : ipv6Value(address)

function contains(cidr: string, family: 4 | 6, value: bigint): boolean {
  const [base = '', bits = '0'] = cidr.split('/')
  const size = family === 4 ? 32n : 128n
  const shift = size - BigInt(bits)
  return value >> shift === addressValue(base, family) >> shift
}

/** The IPv4 address an IPv6 address carries, and the form it is carried in. */
export function embeddedIpv4(address: string): { ipv4: string; form: string } | undefined {
  const value = ipv6Value(address)
  for (const form of EMBEDDING_IPV6) {
    if (!contains(form.cidr, 6, value)) continue
    // :: and ::1 are themselves, not IPv4-compatible 0.0.0.0 and 0.0.0.1.
    if (form.shift === 0n && value >> 24n === 0n) continue
    const v4 = Number((value >> form.shift) & 0xffffffffn)
    const ipv4 = [24, 16, 8, 0].map((bits) => (v4 >>> bits) & 255).join('.')
    return { ipv4, form: form.name }
  }
  return undefined
}

/**
 * Why a literal address may not be a webhook's host: the refused range it falls
 * in (for an IPv6 address carrying an IPv4 one, that address's), or undefined for
 * a globally reachable address. `address` without brackets.
 */
export function refusedRange(address: string): string | undefined {
  const family = isIP(address.replace(/%.*$/, ''))
  if (family === 4) {
    const value = ipv4Value(address)
    const range = REFUSED_IPV4.find((r) => contains(r.cidr, 4, value))
    return range && `${range.cidr}, ${range.name}`
  }
  if (family !== 6) return undefined
  const carried = embeddedIpv4(address)
  if (carried) {
    const why = refusedRange(carried.ipv4)
    return why && `${carried.form} ${carried.ipv4}: ${why}`
  }
  const value = ipv6Value(address)
  if (REACHABLE_IPV6.some((ok) => contains(ok.cidr, 6, value))) return undefined
  const global = contains('2000::/3', 6, value)
  // The first match wins: a named range before the catch-all ::/0.
  const range = REFUSED_IPV6.find(
    (r) => contains(r.cidr, 6, value) && (r.cidr !== '::/0' || !global),
  )
  return range && `${range.cidr}, ${range.name}`
}

/** True for 127.0.0.0/8 and ::1, and an IPv6 address that carries a 127.0.0.0/8 one. */
export function isLoopbackAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return contains('127.0.0.0/8', 4, ipv4Value(address))
  if (family !== 6) return false
  if (ipv6Value(address) === 1n) return true
  const carried = embeddedIpv4(address)
  return carried !== undefined && isLoopbackAddress(carried.ipv4)
}
