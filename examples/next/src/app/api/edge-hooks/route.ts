import { affiliateWebhook } from '@affiliate-webhooks/next'
import { upsertConversion } from '../../../lib/conversions'

// The same handler on the Edge runtime, where the core verifies with Web Crypto.
export const runtime = 'edge'

export const POST = affiliateWebhook({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET as string,
  onConversion: (conversion) => upsertConversion(conversion),
})
