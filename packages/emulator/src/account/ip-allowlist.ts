import { BlockList, isIP } from 'node:net'

/** Most entries of one key's allowlist. */
export const MAX_ALLOWLIST_ENTRIES = 20

/**
 * One allowlist entry checked: an IPv4 or IPv6 address, or a CIDR range of
 * either. Returns the reason it is not one, or undefined when it is.
 */
export function allowlistEntryProblem(entry: string): string | undefined {
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return `"${entry}" is not an IPv4 or IPv6 address or range`
  if (prefix === undefined) return undefined
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1
  if (bits < 0 || bits > (family === 4 ? 32 : 128)) {
    return `"${entry}" has a prefix length outside 0 to ${family === 4 ? 32 : 128}`
  }
  return undefined
}

/**
 * A matcher for a key's allowlist. An IPv4 client seen on an IPv6 socket
 * (`::ffff:10.1.2.3`) matches IPv4 entries. Entries must have passed
 * {@link allowlistEntryProblem}.
 */
export function createAllowlist(entries: readonly string[]): (ip: string) => boolean {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/')
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(prefix), type)
  }
  return (ip) => {
    const family = isIP(ip)
    if (family === 0) return false
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
    if (mapped && list.check(mapped[1] as string, 'ipv4')) return true
    return list.check(ip, family === 6 ? 'ipv6' : 'ipv4')
  }
}
