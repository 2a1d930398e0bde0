/**
 * The bare route every adapter is measured against: the least a correct receiver
 * does. Read the raw body, HMAC-SHA256 it as the spec says, compare in constant
 * time, answer. No JSON parsing, no de-duplication, no ordering.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import process from 'node:process'

export const BARE_ANSWER = '{"received":true}'

export function bareVerify(
  secret: string,
  signature: string | null | undefined,
  body: Uint8Array,
): boolean {
  const t = signature ? /(?:^|,)\s*t=(\d+)/.exec(signature)?.[1] : undefined
  const v1 = signature ? /(?:^|,)\s*v1=([0-9a-f]{64})/.exec(signature)?.[1] : undefined
  if (t === undefined || v1 === undefined) return false
  const mac = createHmac('sha256', secret).update(`${t}.`).update(body).digest()
  return timingSafeEqual(mac, Buffer.from(v1, 'hex'))
}

export const signatureOf = (headers: IncomingHttpHeaders) =>
  headers['service-signature'] as string | undefined

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)
}

/**
 * The receiver options every bench server uses: the secret from BENCH_SECRET and
 * a handler that upserts into an in-memory table, as a publisher's would.
 */
export function benchOptions() {
  const rows = new Map<number, string>()
  return {
    secret: process.env.BENCH_SECRET as string,
    onConversion: (conversion: { id: number; status: string }) => {
      rows.set(conversion.id, conversion.status)
    },
  }
}
