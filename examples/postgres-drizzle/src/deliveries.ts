/**
 * The three deliveries every recipe of this example sends itself, and the
 * lines it prints: a new event (processed, one row), the same event again
 * (duplicate, no second row), and an event whose handler throws after its
 * insert (500, its row rolled back).
 */
import { once } from 'node:events'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'

export const secret = process.env.AFFILIATE_WEBHOOK_SECRET || 'whsec_example_drizzle_secret'
export const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** The publisher's own table, as each recipe creates it. */
export const LEDGER_DDL = `CREATE TABLE IF NOT EXISTS example_ledger (
  event_id text PRIMARY KEY, conversion_id bigint NOT NULL, status text NOT NULL,
  commission numeric(12, 2) NOT NULL, currency text NOT NULL,
  credited_at timestamptz NOT NULL DEFAULT now())`

/** Serves `listener` on a free port, sends the three deliveries, prints each answer, closes. */
export async function sendThree(listener: RequestListener): Promise<void> {
  const server = createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const send = async (label: string, event: object) => {
    const { headers, body } = await signedDelivery({ secret, event })
    const response = await fetch(url, { method: 'POST', headers, body })
    console.log(`--- ${label}: ${response.status} ${await response.text()}`)
  }
  const credited = buildConversionEvent({ conversion: { id: 8101, commission: '12.50' } })
  await send('a new event', credited)
  await send('the same event again', credited)
  await send(
    'a handler that throws after its insert',
    buildConversionEvent({ conversion: { id: 8102, commission: '-1.00' } }),
  )
  server.close()
}
