import { affiliateWebhook } from '@affiliate-webhooks/web'
import { onConversion } from './conversions'

// Options as a function: read on the first request, so `astro build` needs no secret.
export const webhook = affiliateWebhook(() => ({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
  onConversion,
}))
