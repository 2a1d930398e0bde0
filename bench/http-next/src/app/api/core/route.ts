import { createReceiver } from '@affiliate-webhooks/core'

const rows = new Map<number, string>()
const receiver = createReceiver({
  secret: process.env.BENCH_SECRET as string,
  onConversion: (conversion) => {
    rows.set(conversion.id, conversion.status)
  },
})

// The bare App Router route handing its bytes to the core's receive().
export async function POST(request: Request): Promise<Response> {
  const rawBody = new Uint8Array(await request.arrayBuffer())
  const result = await receiver.receive({ headers: request.headers, rawBody })
  return new Response(result.body, { status: result.status, headers: result.headers })
}
