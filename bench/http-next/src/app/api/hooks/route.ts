import { affiliateWebhook } from '@affiliate-webhooks/next'

const rows = new Map<number, string>()

export const POST = affiliateWebhook({
  secret: process.env.BENCH_SECRET as string,
  onConversion: (conversion) => {
    rows.set(conversion.id, conversion.status)
  },
})
