/**
 * Request headers as adapters have them: a Web `Headers`, or a Node-style record
 * whose keys may be lower- or mixed-case and whose values may repeat.
 */
export type HeadersInput =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>

/** Looks a header up case-insensitively; `name` must be lowercase. */
export function getHeader(headers: HeadersInput, name: string): string | undefined {
  // A Node record with the name as Node writes it, the common case, first: one
  // property read. A Headers object has no such own property.
  const direct = (headers as Readonly<Record<string, unknown>>)[name]
  if (typeof direct === 'string') return direct
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>
  // Node lowercases keys, so the direct hit is the common case; the scan serves
  // hand-built records such as `{ 'Service-Signature': ... }`.
  let value = direct as string | readonly string[] | undefined
  if (value === undefined) {
    for (const key in record) {
      if (key.length === name.length && key.toLowerCase() === name) {
        value = record[key]
        break
      }
    }
  }
  if (value === undefined) return undefined
  return typeof value === 'string' ? value : value.join(', ')
}
