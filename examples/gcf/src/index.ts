import type { Conversion } from '@affiliate-webhooks/core'
import { registerHooks } from './app.js'

/** Stand-in for the app's database. */
const conversions = new Map<number, Conversion>()

// `functions-framework --target=hooks` (and Cloud Run functions) serve it.
registerHooks('hooks', {
  secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
  onConversion: (conversion) => {
    conversions.set(conversion.id, conversion)
  },
})
