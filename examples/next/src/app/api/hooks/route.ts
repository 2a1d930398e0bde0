import { affiliateWebhook } from '@affiliate-webhooks/next'
import { upsertConversion } from '../../../lib/conversions'
import { store } from '../../../lib/store'

// App Router, Node runtime: the service POSTs to /api/hooks.
export const POST = affiliateWebhook({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET as string,
  store,
  onConversion: (conversion) => upsertConversion(conversion),
})
