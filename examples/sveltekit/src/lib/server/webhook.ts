import type { Conversion } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/web'

/** Stand-in for the app's database. */
export const conversions = new Map<number, Conversion>()

// Options as a function: read on the first request, so `vite build` needs no secret.
export const webhook = affiliateWebhook(() => ({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
  onConversion: (conversion: Conversion) => {
    conversions.set(conversion.id, conversion)
  },
}))
