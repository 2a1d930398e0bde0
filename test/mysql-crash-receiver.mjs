// One receiver process of the MySQL crash test: the node adapter with the MySQL
// store, imported from the built packages (npm run build first). The handler
// writes its effect row through ctx.tx, tells the test, then does what MODE says:
// `hang` (never returns, so the test can SIGKILL it mid-handler), `throw-once`
// (throws the first time it sees an event) or `ok`.
import { createServer } from 'node:http'
import { mysqlStore } from '@affiliate-webhooks/mysql'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import mysql from 'mysql2/promise'

const { DATABASE_URL, WEBHOOK_SECRET, PORT, LEASE_MS, EFFECTS_TABLE, MODE } = process.env
const pool = mysql.createPool(DATABASE_URL)
const store = mysqlStore({ pool, logger: false })
await store.ready()
const seen = new Set()

const webhook = affiliateWebhook({
  path: '/hooks',
  secret: WEBHOOK_SECRET,
  store,
  leaseMs: Number(LEASE_MS),
  logger: false,
  async onConversion(conversion, event, ctx) {
    await ctx.tx.query(
      `INSERT INTO ${EFFECTS_TABLE} (event_id, conversion_id, pid) VALUES (?, ?, ?)`,
      [event.id, conversion.id, process.pid],
    )
    process.send?.({ effect: event.id })
    if (MODE === 'hang') await new Promise(() => {})
    if (MODE === 'throw-once' && !seen.has(event.id)) {
      seen.add(event.id)
      throw new Error('downstream failed after the effect was written')
    }
  },
})

const server = createServer(webhook)
server.listen(Number(PORT), '127.0.0.1', () => process.send?.({ ready: true, pid: process.pid }))
