import type { Conversion } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/web'

/** Stand-in for the app's database. */
export const conversions = new Map<number, Conversion>()

export const webhook = affiliateWebhook(() => ({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
  onConversion: (conversion: Conversion) => {
    conversions.set(conversion.id, conversion)
  },
}))
