/**
 * `npm run send`: one signed conversion event to the running example, as the
 * service would send it, then the conversions table.
 */
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { secret } from './secret.js'

const base = `http://localhost:${process.env.PORT ?? 3000}`
const event = buildConversionEvent({ conversion: { id: Math.floor(Math.random() * 100_000) } })
const { headers, body } = await signedDelivery({ secret, event })
const response = await fetch(`${base}/hooks`, { method: 'POST', headers, body })
console.log(`POST /hooks ${event.id}: ${response.status} ${await response.text()}`)
console.log(await (await fetch(`${base}/conversions`)).json())
