import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'

const LOOPBACK_V4 = '127.0.0.1'
const LOOPBACK_V6 = '::1'

const hostPort = (address: string, port: number) =>
  `${address.includes(':') ? `[${address}]` : address}:${port}`.toLowerCase()

/**
 * The `Host` headers the console answers: the address the emulator listens on
 * with its port, and `localhost` when that address is a loopback one. A page on
 * another site that rebinds its name to this machine sends its own name and
 * gets nothing. Listening on every interface (0.0.0.0, ::) means that address
 * and each of the machine's own addresses.
 */
export function allowedHosts(address: AddressInfo): Set<string> {
  const { port } = address
  const wildcard = address.address === '0.0.0.0' || address.address === '::'
  const addresses = wildcard
    ? Object.values(networkInterfaces())
        .flat()
        .map((info) => info?.address)
        .filter((value): value is string => typeof value === 'string')
    : [address.address]
  const hosts = new Set([address.address, ...addresses].map((value) => hostPort(value, port)))
  if (addresses.includes(LOOPBACK_V4) || addresses.includes(LOOPBACK_V6)) {
    hosts.add(`localhost:${port}`)
  }
  return hosts
}

/** True when the request's `Host` header is one of `hosts` (case aside). */
export function hostAllowed(host: string | undefined, hosts: ReadonlySet<string>): boolean {
  return host !== undefined && hosts.has(host.toLowerCase())
}
