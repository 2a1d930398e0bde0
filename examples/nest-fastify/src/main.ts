import type { Conversion } from '@affiliate-webhooks/core'
import { createApp } from './app.js'

/** Stand-in for the app's database. */
const conversions = new Map<number, Conversion>()

const app = await createApp({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
  onConversion: (conversion) => {
    conversions.set(conversion.id, conversion)
  },
})
await app.listen(Number(process.env.PORT ?? 3000), '0.0.0.0')
console.log(`POST deliveries to ${await app.getUrl()}/hooks`)
