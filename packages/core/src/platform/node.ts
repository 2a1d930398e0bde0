import { createHmac, createSecretKey, hash, type KeyObject, timingSafeEqual } from 'node:crypto'
import { cacheKey, type Platform } from './types.js'

const keys = new Map<string, KeyObject>()
// The hit first, so the common case makes no closure.
const keyFor = (secret: string) =>
  keys.get(secret) ?? cacheKey(keys, secret, () => createSecretKey(Buffer.from(secret, 'utf8')))

/** SHA-256's block, in bytes: HMAC's key pads are one block each. */
const BLOCK = 64
/**
 * Bodies up to this size are signed with two one-shot hashes over the key's
 * precomputed pads (RFC 2104's definition of HMAC) instead of an Hmac object.
 * On Node 24 making the object and setting its key costs more than hashing a
 * small body; above about 1.5 KB copying the body costs more than that saves.
 */
const ONE_SHOT_MAX = 1024

interface Pads {
  /** The key XOR 0x36, one block: what the inner hash starts with. */
  inner: Buffer
  /** The key XOR 0x5c, then room for the inner digest: the whole outer message. */
  outer: Buffer
}

const pads = new Map<string, Pads>()

function makePads(secret: string): Pads {
  let key = Buffer.from(secret, 'utf8')
  // A key longer than a block is hashed first, as HMAC says.
  if (key.byteLength > BLOCK) key = hash('sha256', key, 'buffer')
  const inner = Buffer.alloc(BLOCK)
  const outer = Buffer.alloc(BLOCK + 32)
  for (let i = 0; i < BLOCK; i++) {
    const byte = key[i] ?? 0
    inner[i] = byte ^ 0x36
    outer[i] = byte ^ 0x5c
  }
  return { inner, outer }
}

const padsFor = (secret: string) =>
  pads.get(secret) ?? cacheKey(pads, secret, () => makePads(secret))

/** Where {@link smallDigest} leaves its answer: read it before the next call. */
const mac = Buffer.alloc(32)

/**
 * HMAC-SHA256 of a small body: H(outer pad || H(inner pad || prefix || body)).
 * The prefix is ASCII (checked), so its latin1 bytes are its UTF-8 bytes. Each
 * digest comes back as a latin1 (`binary`) string and is written where it goes: on Node 24
 * `hash()` returns a string in half the time it takes to return a Buffer. All
 * synchronous, so the shared buffers are filled and read before anything else runs.
 */
function smallDigest(secret: string, signedPrefix: string, body: Uint8Array): Buffer {
  const { inner, outer } = padsFor(secret)
  const message = Buffer.allocUnsafe(BLOCK + signedPrefix.length + body.byteLength)
  message.set(inner, 0)
  const written = message.write(signedPrefix, BLOCK, 'latin1')
  message.set(body, BLOCK + written)
  outer.write(hash('sha256', message, 'binary'), BLOCK, 'latin1')
  mac.write(hash('sha256', outer, 'binary'), 0, 'latin1')
  return mac
}

/** Whether latin1 writes the text as UTF-8 would: `<digits>.` always is. */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}

/**
 * The HMAC; a small body's answer is a shared buffer, valid until the next call
 * (every caller compares or encodes it at once). A larger body goes to an Hmac in
 * its own update() call: no copy, no concatenation.
 */
const digest = (secret: string, signedPrefix: string, body: Uint8Array) =>
  body.byteLength <= ONE_SHOT_MAX && isAscii(signedPrefix)
    ? smallDigest(secret, signedPrefix, body)
    : createHmac('sha256', keyFor(secret)).update(signedPrefix).update(body).digest()

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
