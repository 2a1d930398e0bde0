/**
 * Netlify and Vercel function files (examples/functions) with each conformance
 * case's options: each function file, served the way those platforms' Node
 * runtimes serve it (a real HTTP server turning each request into a Web Request
 * and writing the Response back), runs the shared conformance cases. The cases
 * need options of their own (stores, handlers that throw, loggers), so here the
 * example's `src/webhook.ts` is swapped by a mock for a webhook made with the
 * case's options: what runs is the function files' wiring and the web adapter.
 * The example's own `src/webhook.ts` (its secret, its handler) runs unmocked in
 * functions.test.ts. The platforms' own CLIs (`netlify dev`, `vercel dev`) need
 * the network, so they do not run here. */
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/web'
import { describe, vi } from 'vitest'
import { POST } from '../../examples/functions/api/hooks.js'
import netlify from '../../examples/functions/netlify/functions/hooks.js'
import { type Adapter, PATH, serve, webToNode } from '../support/conformance-adapters.js'
import { conformanceCases } from '../support/conformance-cases.js'

const current = vi.hoisted(() => ({
  handler: undefined as ((request: Request) => Promise<Response>) | undefined,
}))
vi.mock('../../examples/functions/src/webhook.js', () => ({
  webhook: (request: Request) => {
    if (!current.handler) throw new Error('no case running')
    return current.handler(request)
  },
}))

/** A platform serving one function on PATH; `route` picks the export for a request. */
function platform(
  name: string,
  route: (method: string) => ((request: Request) => Promise<Response>) | undefined,
  extra: Partial<Adapter> = {},
): Adapter {
  return {
    name,
    ...extra,
    start: (options: ReceiverOptions) => {
      current.handler = affiliateWebhook(options)
      return serve(
        webToNode(async (request) => {
          if (new URL(request.url).pathname !== PATH) return new Response(null, { status: 404 })
          const fn = route(request.method)
          return fn ? fn(request) : new Response(null, { status: 405, headers: { allow: 'POST' } })
        }),
      )
    },
  }
}

describe('Netlify function (export default async (req: Request) => Response)', () => {
  conformanceCases(platform('netlify', () => netlify))
})

describe('Vercel function (export function POST(request: Request))', () => {
  conformanceCases(
    platform('vercel', (method) => (method === 'POST' ? POST : undefined), {
      platformAnswersOtherMethods: true,
    }),
  )
})
