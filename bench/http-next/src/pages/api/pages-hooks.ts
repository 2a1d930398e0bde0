import { affiliateWebhookPages } from '@affiliate-webhooks/next'

export const config = { api: { bodyParser: false } }

const rows = new Map<number, string>()

export default affiliateWebhookPages({
  secret: process.env.BENCH_SECRET as string,
  onConversion: (conversion) => {
    rows.set(conversion.id, conversion.status)
  },
})
