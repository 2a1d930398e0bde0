import { cacheKey, type Platform } from './types.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const keys = new Map<string, Promise<CryptoKey>>()

// Importing a key is the slow part of Web Crypto, so it happens once per secret.
const keyFor = (secret: string) =>
  cacheKey(keys, secret, () =>
    crypto.subtle.importKey(
      'raw',
      encoder.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    ),
  )

// Web Crypto takes one buffer: the body is copied once behind the prefix bytes.
function signedBytes(signedPrefix: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(signedPrefix)
  const data = new Uint8Array(prefix.byteLength + body.byteLength)
  data.set(prefix, 0)
  data.set(body, prefix.byteLength)
  return data
}

async function digest(secret: string, data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', await keyFor(secret), data))
}

/** A hex digit's value (either case), or -1. */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  const lower = code | 32
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

/** Runs through every byte whatever the contents, like timingSafeEqual. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  let diff = 0
  for (let i = 0; i < a.byteLength; i++) diff |= (a[i] as number) ^ (b[i] as number)
  return diff === 0
}

export const platform: Platform = {
  importOtelApi: () => undefined,
  async verify(secrets, signedPrefix, body, candidates) {
    const data = signedBytes(signedPrefix, body)
    let matched = false
    for (const secret of secrets) {
      const actual = await digest(secret, data)
      for (const candidate of candidates) {
        if (constantTimeEqual(actual, candidate)) matched = true
      }
    }
    return matched
  },
  signatureBytes(hex) {
    if (hex.length !== 64) return undefined
    const bytes = new Uint8Array(32)
    for (let i = 0; i < 32; i++) {
      const high = hexDigit(hex.charCodeAt(2 * i))
      const low = hexDigit(hex.charCodeAt(2 * i + 1))
      if (high < 0 || low < 0) return undefined
      bytes[i] = high * 16 + low
    }
    return bytes
  },
  async sign(secret, signedPrefix, body) {
    const bytes = await digest(secret, signedBytes(signedPrefix, body))
    let hex = ''
    for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
    return hex
  },
  utf8Decode(bytes) {
    return decoder.decode(bytes)
  },
  utf8Encode(text) {
    return encoder.encode(text)
  },
}
