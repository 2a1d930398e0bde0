import { randomBytes } from 'node:crypto'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** `length` random letters and digits. */
export function randomToken(length: number): string {
  // 248 is the largest multiple of 62 below 256: no bias.
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62]
    }
  }
  return out
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

/** Ids of the things the emulator creates. */
export const newId = {
  webhook: () => `wh_${hex(8)}`,
  delivery: () => `dlv_${hex(10)}`,
  event: () => `evt_${hex(12)}`,
  secret: () => `whsec_${randomToken(32)}`,
  apiKey: () => `la_${randomToken(32)}`,
}
