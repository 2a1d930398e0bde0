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

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
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
    const wanted = candidates.filter((hex) => hex.length === 64).map(fromHex)
    const data = signedBytes(signedPrefix, body)
    let matched = false
    for (const secret of secrets) {
      const actual = await digest(secret, data)
      for (const candidate of wanted) {
        if (constantTimeEqual(actual, candidate)) matched = true
      }
    }
    return matched
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
