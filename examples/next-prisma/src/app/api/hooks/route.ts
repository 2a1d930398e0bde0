import { affiliateWebhook } from '@affiliate-webhooks/next'
import { webhookStore } from '../../../lib/db'
import { recordConversion } from '../../../lib/ledger'

// Prisma's pg adapter needs TCP sockets: the Node runtime.
export const runtime = 'nodejs'

export const POST = affiliateWebhook({
  secret: process.env.AFFILIATE_WEBHOOK_SECRET as string,
  store: webhookStore,
  onConversion: recordConversion,
})
