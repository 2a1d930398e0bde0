/** `12:34:56 UTC` of an ISO time; empty without one. */
export function time(iso: string | null | undefined): string {
  return iso ? `${iso.slice(11, 19)} UTC` : ''
}

/** A schedule offset: `+30 s`, `+5 min`, `+2 h`. */
export function offsetText(ms: number): string {
  const minutes = ms / 60000
  if (minutes < 1) return `+${Math.round(ms / 1000)} s`
  if (minutes < 60) return `+${Math.round(minutes)} min`
  return `+${Math.round(minutes / 60)} h`
}

/** Service ms as real time at this time scale. */
export function realText(ms: number, scale: number): string {
  const real = ms / scale
  if (real < 1000) return `${Math.round(real)} ms`
  if (real < 120000) return `${(real / 1000).toFixed(1)} s`
  if (real < 7200000) return `${Math.round(real / 60000)} min`
  return `${(real / 3600000).toFixed(1)} h`
}

/** The address of a delivery's attempt view. */
export const deliveryLink = (id: string): string => `#delivery=${encodeURIComponent(id)}`

/** The address of an endpoint's card and its deliveries. */
export const endpointLink = (id: string): string => `#endpoint=${encodeURIComponent(id)}`

/** A count with its noun: `1 delivery`, `3 deliveries`. */
export const count = (n: number, one: string, many: string): string =>
  `${n} ${n === 1 ? one : many}`
