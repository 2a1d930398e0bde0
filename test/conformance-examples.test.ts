/**
 * The example apps, started as their server.ts starts them (on port 0): a signed
 * delivery lands in the conversions table, and an older update arriving after a
 * newer one does not overwrite it. examples/next runs in test/next-build.test.ts.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { createApp as expressApp } from '../examples/express/src/app.js'
import { createApp as fastifyApp } from '../examples/fastify/src/app.js'
import { createApp as nodeApp } from '../examples/node/src/app.js'
import { SECRET, send } from './conformance-cases.js'

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

const examples: [string, () => Promise<Started>][] = [
  ['examples/node', () => listen(nodeApp(SECRET).server)],
  ['examples/express', () => listen(createServer(expressApp(SECRET).app))],
  [
    'examples/fastify',
    async () => {
      const { app } = await fastifyApp(SECRET)
      return { base: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() }
    },
  ],
]

const started: Started[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()))
})

describe.each(examples)('%s', (_name, start) => {
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
