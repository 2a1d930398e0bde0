import { affiliateWebhookPages } from '@affiliate-webhooks/next'
import { upsertConversion } from '../../lib/conversions'
import { store } from '../../lib/store'

// Pages Router: Next must not parse the body, or the signed bytes are gone.
// Next reads this literal at build time, so it has to be written here, as is.
export const config = { api: { bodyParser: false } }

export default affiliateWebhookPages({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET as string,
  store,
  onConversion: (conversion) => upsertConversion(conversion),
})
