import type { Conversion } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/h3'

/** The app's conversions table (in memory here; a database in a real app). */
export const conversions = new Map<number, Conversion>()

// The receiver is made on the first request, so `nitro build` needs no secret.
export const webhook = affiliateWebhook({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
  onConversion: (conversion) => {
    conversions.set(conversion.id, conversion)
  },
})
