/**
 * The example apps, started as their server.ts starts them (on port 0): a signed
 * delivery lands in the conversions table, and an older update arriving after a
 * newer one does not overwrite it. examples/next runs in test/next-build.test.ts.
 */

import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { EventStore } from '@affiliate-webhooks/core'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { redisStore } from '@affiliate-webhooks/redis'
import { afterEach, describe, expect, it } from 'vitest'
import { createApp as expressApp } from '../../examples/express/src/app.js'
import { createApp as fastifyApp } from '../../examples/fastify/src/app.js'
import { createApp as nodeApp } from '../../examples/node/src/app.js'
import { SECRET, send } from '../support/conformance-cases.js'
import { REDIS_URL } from '../support/redis-servers.js'

interface Started {
  base: string
  close: () => Promise<void>
}

async function listen(server: Server): Promise<Started> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      const closed = once(server, 'close')
      server.close()
      server.closeAllConnections()
      await closed
    },
  }
}

const examples: [string, (store?: EventStore) => Promise<Started>][] = [
  ['examples/node', (store) => listen(nodeApp(SECRET, store).server)],
  ['examples/express', (store) => listen(createServer(expressApp(SECRET, store).app))],
  [
    'examples/fastify',
    async (store) => {
      const { app } = await fastifyApp(SECRET, store)
      return { base: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() }
    },
  ],
]

const started: Started[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()))
})

describe.each(examples)('%s', (_name, start) => {
  it('with the Redis store its server.ts picks for REDIS_URL, two instances share de-duplication', async () => {
    // What src/store.ts builds when REDIS_URL is set, on a prefix of this run's own.
    const prefix = `aw-example-${randomUUID().slice(0, 8)}:`
    const stores = [redisStore({ url: REDIS_URL, prefix }), redisStore({ url: REDIS_URL, prefix })]
    const [a, b] = [await start(stores[0]), await start(stores[1])] as [Started, Started]
    started.push(a, b, {
      base: '',
      close: async () => {
        for (const store of stores) store.client.disconnect()
      },
    })
    const event = buildConversionEvent({ conversion: { id: 7100 } })
    expect((await send(`${a.base}/hooks`, event)).json.outcome).toBe('processed')
    expect((await send(`${b.base}/hooks`, event, { attempt: 2 })).json.outcome).toBe('duplicate')
  })

  it('upserts delivered conversions by id, keeping the newest status', async () => {
    const app = await start()
    started.push(app)
    const created = Date.now() - 3_600_000
    const pending = buildConversionEvent({ createdAt: created, conversion: { id: 7001 } })
    const approved = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: created + 60_000,
      conversion: { id: 7001, status: 'approved' },
    })
    const other = buildConversionEvent({ createdAt: created, conversion: { id: 7002 } })
    expect((await send(`${app.base}/hooks`, pending)).json.outcome).toBe('processed')
    expect((await send(`${app.base}/hooks`, approved)).json.outcome).toBe('processed')
    expect((await send(`${app.base}/hooks`, pending, { attempt: 2 })).json.outcome).toBe(
      'duplicate',
    )
    expect((await send(`${app.base}/hooks`, other)).json.outcome).toBe('processed')

    const rows = (await (await fetch(`${app.base}/conversions`)).json()) as {
      id: number
      status: string
    }[]
    expect(rows.map(({ id, status }) => [id, status]).sort()).toEqual([
      [7001, 'approved'],
      [7002, 'pending'],
    ])
  })
})
