/**
 * What differs between runtimes. The `node` build uses node:crypto; the default
 * build uses Web Crypto (Edge, Workers, Deno, Bun). Both give the same answers.
 */
export interface Platform {
  /**
   * True when HMAC-SHA256 over `signedPrefix` followed by `body`, keyed with any
   * of `secrets`, equals one of `candidates` (32 bytes each, from
   * {@link Platform.signatureBytes}), compared in constant time. Synchronous
   * where the runtime allows it, so the hot path stays cheap.
   */
  verify(
    secrets: readonly string[],
    signedPrefix: string,
    body: Uint8Array,
    candidates: readonly Uint8Array[],
  ): boolean | Promise<boolean>
  /**
   * The 32 bytes a `v1` value of 64 hex digits (either case) stands for, or
   * undefined for anything else: a value that is not that cannot match.
   */
  signatureBytes(hex: string): Uint8Array | undefined
  /** Lowercase hex HMAC-SHA256 over `signedPrefix` followed by `body`. */
  sign(secret: string, signedPrefix: string, body: Uint8Array): Promise<string>
  utf8Decode(bytes: Uint8Array): string
  utf8Encode(text: string): Uint8Array
  /**
   * Imports `@opentelemetry/api` if it is installed (undefined if not), where a
   * run-time import of an optional package is possible: the node build. The web
   * build returns undefined at once: Workers refuse a module with an import
   * whose name is not a literal, so there the API is passed as `telemetry`.
   */
  importOtelApi(): Promise<unknown> | undefined
}

/** Secrets are configuration, so a small cap only guards callers who pass a new one per call. */
export const KEY_CACHE_LIMIT = 64

export function cacheKey<V>(cache: Map<string, V>, secret: string, make: () => V): V {
  let value = cache.get(secret)
  if (value === undefined) {
    if (cache.size >= KEY_CACHE_LIMIT) cache.clear()
    value = make()
    cache.set(secret, value)
  }
  return value
}
