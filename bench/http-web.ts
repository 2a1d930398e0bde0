/**
 * The web handler on one runtime, beside the bare route on the same runtime and
 * server: `bun bench/http-web.ts`, `deno run ... bench/http-web.ts`, or
 * `node --import tsx bench/http-web.ts` (served by @hono/node-server). /hooks is
 * the handler, /bare reads the bytes and checks the HMAC (bench/http-bare.ts),
 * /core hands the bytes to the core's receive(). Prints `{"port":N}`.
 */
import process from 'node:process'
import { createReceiver } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/web'
import { BARE_ANSWER, bareVerify, benchOptions } from './http-bare.js'

const options = benchOptions()
const { secret } = options
const json = { 'content-type': 'application/json' }

const hooks = affiliateWebhook(options)
const core = createReceiver(options)

const routes: Record<string, (request: Request) => Promise<Response> | Response> = {
  '/hooks': hooks,
  '/bare': async (request) => {
    const body = new Uint8Array(await request.arrayBuffer())
    const ok = bareVerify(secret, request.headers.get('service-signature'), body)
    return new Response(BARE_ANSWER, { status: ok ? 200 : 401, headers: json })
  },
  '/core': async (request) => {
    const rawBody = new Uint8Array(await request.arrayBuffer())
    const result = await core.receive({ headers: request.headers, rawBody })
    return new Response(result.body, { status: result.status, headers: result.headers })
  },
  '/cpu': () => {
    const { user, system } = process.cpuUsage()
    return new Response(JSON.stringify({ cpu: user + system }), { headers: json })
  },
}

const fetch = (request: Request) => {
  const path = new URL(request.url).pathname
  const route = routes[path]
  return route ? route(request) : new Response(null, { status: 404 })
}
const announce = (port: number) => console.log(JSON.stringify({ port }))

const g = globalThis as {
  Bun?: { serve(options: object): { port: number } }
  Deno?: { serve(options: object, handler: typeof fetch): unknown }
}
if (g.Bun) {
  announce(g.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch }).port)
} else if (g.Deno) {
  g.Deno.serve(
    { port: 0, hostname: '127.0.0.1', onListen: ({ port }: { port: number }) => announce(port) },
    fetch,
  )
} else {
  const { serve } = await import('@hono/node-server')
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => announce(info.port))
  process.on('SIGTERM', () => server.close())
}
