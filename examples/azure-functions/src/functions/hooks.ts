import type { Conversion } from '@affiliate-webhooks/core'
import { app } from '@azure/functions'
import { hooksHandler } from '../app.js'

/** Stand-in for the app's database. */
const conversions = new Map<number, Conversion>()

app.http('hooks', {
  route: 'hooks',
  methods: ['GET', 'POST'],
  authLevel: 'anonymous',
  handler: hooksHandler({
    secret: process.env.AFFILIATE_WEBHOOK_SECRET ?? '',
    onConversion: (conversion) => {
      conversions.set(conversion.id, conversion)
    },
  }),
})
