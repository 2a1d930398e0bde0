/**
 * The adapters the hostile-input list runs against, started as their READMEs
 * say on loopback port 0: node, Express, Fastify, Koa, h3, the web handler
 * behind a streaming bridge (the IncomingMessage as the Request's body, as Next
 * and @hono/node-server hand it over), and Lambda behind an HTTP API gateway
 * (which buffers the whole body: only the attacks after the body reach it).
 */
import { affiliateWebhook as webWebhook } from '@affiliate-webhooks/web'
import { type Adapter, adapters, PATH, serve, webToNode } from '../support/conformance-adapters.js'
import { h3Adapters, koaAdapters } from './conformance-frameworks.js'
import { lambdaAdapters } from './conformance-serverless.js'

const named = (list: Adapter[], name: string): Adapter => {
  const found = list.find((adapter) => adapter.name === name)
  if (found === undefined) throw new Error(`no adapter named ${name}`)
  return found
}

export const hostileAdapters: Adapter[] = [
  named(adapters, 'node'),
  named(adapters, 'express 5'),
  named(adapters, 'fastify'),
  named(koaAdapters, 'koa 3 (app.use with path)'),
  named(h3Adapters, 'h3 (router.use, toNodeListener)'),
  {
    name: 'web (streaming bridge)',
    start: (options) => {
      const listener = webToNode(webWebhook(options))
      return serve((req, res) => {
        if ((req.url ?? '').split('?', 1)[0] === PATH) void listener(req, res)
        else res.writeHead(404).end()
      })
    },
  },
  named(lambdaAdapters, 'lambda behind API Gateway HTTP API (payload 2.0)'),
]
