import { createReceiver } from '@affiliate-webhooks/core'
import type { NextApiRequest, NextApiResponse } from 'next'

export const config = { api: { bodyParser: false } }

const rows = new Map<number, string>()
const receiver = createReceiver({
  secret: process.env.BENCH_SECRET as string,
  onConversion: (conversion) => {
    rows.set(conversion.id, conversion.status)
  },
})

// The bare Pages API route handing its bytes to the core's receive().
export default async function core(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const result = await receiver.receive({ headers: req.headers, rawBody: Buffer.concat(chunks) })
  res.writeHead(result.status, result.headers).end(result.body)
}
