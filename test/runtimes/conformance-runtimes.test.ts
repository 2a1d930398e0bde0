import { describe } from 'vitest'
// The conformance cases against the web handler on every runtime it claims, each
// the real thing installed from npm: Bun, Deno, workerd (Miniflare), and Hono on
// Node and on each of those. test/README.md has the whole matrix.

import { affiliateWebhook } from '@affiliate-webhooks/web'
import { serve as honoServe } from '@hono/node-server'
import { Hono } from 'hono'
import { inProcessVersions } from '../stacks/tested-versions.js'
import type { Adapter } from '../support/conformance-adapters.js'
import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'
import { processRuntime, workerdRuntime } from './runtime-bridge.js'

const honoOnNode: Adapter = {
  name: 'hono on Node (@hono/node-server)',
  start: async (options) => {
    const handler = affiliateWebhook(options)
    const app = new Hono()
    app.all('/hooks', (c) => handler(c.req.raw))
    const server = await new Promise<ReturnType<typeof honoServe>>((resolve) => {
      const started = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
        resolve(started),
      )
    })
    const { port } = server.address() as { port: number }
    return {
      url: `http://127.0.0.1:${port}/hooks`,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve())
          ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
        }),
    }
  },
}

forEachAdapter(
  [
    honoOnNode,
    processRuntime('bun', 'web'),
    processRuntime('bun', 'hono'),
    processRuntime('deno', 'web'),
    processRuntime('deno', 'hono'),
    workerdRuntime('web'),
    workerdRuntime('hono'),
  ],
  conformanceCases,
)

describe('framework versions', () => {
  inProcessVersions('Hono', 'current', { hono: 'hono', '@hono/node-server': '@hono/node-server' })
})
