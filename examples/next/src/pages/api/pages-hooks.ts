import { affiliateWebhookPages } from '@affiliate-webhooks/next'
import { upsertConversion } from '../../lib/conversions'

// Pages Router: Next must not parse the body, or the signed bytes are gone.
// Next reads this literal at build time, so it has to be written here, as is.
export const config = { api: { bodyParser: false } }

export default affiliateWebhookPages({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET as string,
  onConversion: (conversion) => upsertConversion(conversion),
})
