import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto'
import { cacheKey, type Platform } from './types.js'

const keys = new Map<string, KeyObject>()
// The hit first, so the common case makes no closure.
const keyFor = (secret: string) =>
  keys.get(secret) ?? cacheKey(keys, secret, () => createSecretKey(Buffer.from(secret, 'utf8')))

// The body goes to the HMAC in its own update() call: no copy, no concatenation.
const digest = (secret: string, signedPrefix: string, body: Uint8Array) =>
  createHmac('sha256', keyFor(secret)).update(signedPrefix).update(body).digest()

// Kept in a variable so that bundlers leave the import to run time: without the
// package installed the import fails there, and the receiver goes on without it.
const OTEL_API = '@opentelemetry/api'
let otelApi: Promise<unknown> | undefined

export const platform: Platform = {
  importOtelApi() {
    otelApi ??= import(/* webpackIgnore: true */ /* @vite-ignore */ OTEL_API).catch(() => undefined)
    return otelApi
  },
  verify(secrets, signedPrefix, body, candidates) {
    // What the service sends: one secret, one v1. No loop, one comparison.
    if (secrets.length === 1 && candidates.length === 1) {
      return timingSafeEqual(
        digest(secrets[0] as string, signedPrefix, body),
        candidates[0] as Uint8Array,
      )
    }
    let matched = false
    for (const secret of secrets) {
      const actual = digest(secret, signedPrefix, body)
      for (const candidate of candidates) {
        if (timingSafeEqual(actual, candidate)) matched = true
      }
    }
    return matched
  },
  signatureBytes(hex) {
    if (hex.length !== 64) return undefined
    // Node's decoder stops at the first pair that is not hex: 32 bytes means all were.
    const bytes = Buffer.from(hex, 'hex')
    return bytes.byteLength === 32 ? bytes : undefined
  },
  async sign(secret, signedPrefix, body) {
    return digest(secret, signedPrefix, body).toString('hex')
  },
  utf8Decode(bytes) {
    const buffer = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    // UTF-8 is toString's default; without arguments it skips the encoding lookup.
    return buffer.toString()
  },
  utf8Encode(text) {
    return Buffer.from(text, 'utf8')
  },
}
