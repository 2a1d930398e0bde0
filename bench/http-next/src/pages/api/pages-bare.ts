import { createHmac, timingSafeEqual } from 'node:crypto'
import type { NextApiRequest, NextApiResponse } from 'next'

export const config = { api: { bodyParser: false } }

// The bare Pages API route: raw bytes, the spec's HMAC, a constant-time compare.
export default async function bare(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const body = Buffer.concat(chunks)
  const signature = (req.headers['service-signature'] as string | undefined) ?? ''
  const t = /(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]
  const v1 = /(?:^|,)\s*v1=([0-9a-f]{64})/.exec(signature)?.[1]
  const mac = createHmac('sha256', process.env.BENCH_SECRET as string)
    .update(`${t}.`)
    .update(body)
    .digest()
  const ok = t !== undefined && v1 !== undefined && timingSafeEqual(mac, Buffer.from(v1, 'hex'))
  res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
  res.end(ok ? '{"received":true}' : '{"error":"signature"}')
}
