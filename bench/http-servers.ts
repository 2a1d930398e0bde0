/**
 * One framework per process, serving side by side its adapter on /hooks, the bare
 * route on /bare, and on /core the bare route handing its bytes to the core's
 * receive() (what the adapter costs beyond the core is /hooks minus /core):
 * `node --import tsx bench/http-servers.ts <framework>`.
 * Prints `{"port":N}` once listening. The packages are the built ones, by name.
 */
import { once } from 'node:events'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createReceiver } from '@affiliate-webhooks/core'
import { affiliateWebhook as expressWebhook } from '@affiliate-webhooks/express'
import { affiliateWebhook as fastifyWebhook } from '@affiliate-webhooks/fastify'
import { affiliateWebhook as koaWebhook } from '@affiliate-webhooks/koa'
import { affiliateWebhook as nodeWebhook } from '@affiliate-webhooks/node'
import express5 from 'express'
import express4 from 'express4'
import Fastify from 'fastify'
import Koa from 'koa'
import { BARE_ANSWER, bareVerify, benchOptions, readBody, signatureOf } from './http-bare.js'

const options = benchOptions()
const { secret } = options

/** CPU time of this process so far, µs: the bench divides its growth by the requests served. */
const cpu = () => {
  const { user, system } = process.cpuUsage()
  return JSON.stringify({ cpu: user + system })
}

const core = createReceiver(options)
const coreNode: RequestListener = (req, res) => {
  readBody(req)
    .then((rawBody) => core.receive({ headers: req.headers, rawBody }))
    .then((result) => {
      res.writeHead(result.status, result.headers).end(result.body)
    })
}

const bareNode: RequestListener = (req, res) => {
  readBody(req).then((body) => {
    const ok = bareVerify(secret, signatureOf(req.headers), body)
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(BARE_ANSWER)
  })
}

async function listen(listener: RequestListener): Promise<number> {
  const server = createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

function expressApp(createApp: typeof express5): RequestListener {
  const app = createApp()
  app.post('/hooks', expressWebhook(options))
  app.post('/bare', (req, res) => bareNode(req, res))
  app.post('/core', (req, res) => coreNode(req, res))
  app.get('/cpu', (_req, res) => {
    res.end(cpu())
  })
  return app
}

/**
 * The adapter as its README shows it, `app.use(affiliateWebhook({ path, ... }))`
 * first; behind it, by path, the bare route and bare + core, which read the raw
 * body from `ctx.req` (Koa has no body reader of its own) and answer through the
 * context as Koa handlers do.
 */
function koaApp(): RequestListener {
  const app = new Koa()
  app.use(koaWebhook({ ...options, path: '/hooks' }))
  app.use(async (ctx) => {
    if (ctx.path === '/cpu') {
      ctx.type = 'application/json'
      ctx.body = cpu()
      return
    }
    const rawBody = await readBody(ctx.req)
    if (ctx.path === '/core') {
      const result = await core.receive({ headers: ctx.headers, rawBody })
      ctx.status = result.status
      ctx.set(result.headers)
      ctx.body = result.body
      return
    }
    ctx.status = bareVerify(secret, signatureOf(ctx.headers), rawBody) ? 200 : 401
    ctx.type = 'application/json'
    ctx.body = BARE_ANSWER
  })
  return app.callback()
}

const servers: Record<string, () => Promise<number>> = {
  node: () => {
    const hooks = nodeWebhook({ ...options, path: '/hooks' })
    return listen((req, res) =>
      hooks(req, res, () => {
        if (req.url === '/cpu') res.end(cpu())
        else if (req.url === '/core') coreNode(req, res)
        else bareNode(req, res)
      }),
    )
  },
  'express 4': () => listen(expressApp(express4 as unknown as typeof express5)),
  'express 5': () => listen(expressApp(express5)),
  koa: () => listen(koaApp()),
  fastify: async () => {
    const app = Fastify()
    await app.register(fastifyWebhook, { ...options, path: '/hooks' })
    // The bare route gets what the plugin gets: the raw bytes as a Buffer.
    await app.register(async (bare) => {
      bare.removeAllContentTypeParsers()
      bare.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
      bare.post('/bare', async (request, reply) => {
        const ok = bareVerify(secret, signatureOf(request.headers), request.body as Buffer)
        reply
          .code(ok ? 200 : 401)
          .header('content-type', 'application/json')
          .send(BARE_ANSWER)
      })
      bare.post('/core', async (request, reply) => {
        const result = await core.receive({
          headers: request.headers,
          rawBody: request.body as Buffer,
        })
        reply.code(result.status).headers(result.headers).send(result.body)
      })
    })
    app.get('/cpu', async (_request, reply) => reply.type('application/json').send(cpu()))
    await app.listen({ port: 0, host: '127.0.0.1' })
    return (app.server.address() as AddressInfo).port
  },
}

const framework = process.argv[2] ?? ''
const start = servers[framework]
if (start === undefined) throw new Error(`unknown framework ${framework}`)
console.log(JSON.stringify({ port: await start() }))
