import { createHmac, timingSafeEqual } from 'node:crypto'

// The bare App Router route: raw bytes, the spec's HMAC, a constant-time compare.
export async function POST(request: Request): Promise<Response> {
  const body = new Uint8Array(await request.arrayBuffer())
  const signature = request.headers.get('service-signature') ?? ''
  const t = /(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]
  const v1 = /(?:^|,)\s*v1=([0-9a-f]{64})/.exec(signature)?.[1]
  const mac = createHmac('sha256', process.env.BENCH_SECRET as string)
    .update(`${t}.`)
    .update(body)
    .digest()
  const ok = t !== undefined && v1 !== undefined && timingSafeEqual(mac, Buffer.from(v1, 'hex'))
  return new Response(ok ? '{"received":true}' : '{"error":"signature"}', {
    status: ok ? 200 : 401,
    headers: { 'content-type': 'application/json' },
  })
}
