import { affiliateWebhook } from '@affiliate-webhooks/next'
import { upsertConversion } from '../../../lib/conversions'

// App Router, Node runtime: the service POSTs to /api/hooks.
export const POST = affiliateWebhook({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET as string,
  onConversion: (conversion) => upsertConversion(conversion),
})
