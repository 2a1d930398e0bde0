/**
 * Koa 2, Koa 3, h3 1, h3 2 and NestJS, started the way their READMEs say, on port 0 of
 * 127.0.0.1, for the shared conformance cases.
 */
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook as h3Webhook } from '@affiliate-webhooks/h3'
import { affiliateWebhook as koaWebhook } from '@affiliate-webhooks/koa'
import Router from '@koa/router'
import { createApp, createRouter, toNodeListener } from 'h3'
import { H3 } from 'h3v2'
import { toNodeHandler } from 'h3v2/node'
import Koa from 'koa'
import Koa2 from 'koa2'
import { type Adapter, PATH, serve } from '../support/conformance-adapters.js'

/** h3 1.x as Nitro runs it on Node: a router route, the app as a node:http listener. */
export const h3Adapters: Adapter[] = [
  {
    name: 'h3 (router.use, toNodeListener)',
    start: (options: ReceiverOptions) => {
      const app = createApp()
      app.use(createRouter().use(PATH, h3Webhook(options)))
      return serve(toNodeListener(app))
    },
  },
  {
    // h3 2 as Nitro 3 runs it on Node: srvx's Request over the IncomingMessage.
    name: 'h3 2 (app.all, h3/node toNodeHandler)',
    start: (options: ReceiverOptions) => {
      const app = new H3()
      app.all(PATH, h3Webhook(options))
      return serve(toNodeHandler(app))
    },
  },
]

export const koaAdapters: Adapter[] = [
  {
    // Plain middleware on the app, with `path`.
    name: 'koa 2 (app.use with path)',
    start: (options: ReceiverOptions) => {
      const app = new Koa2()
      app.use(koaWebhook({ ...options, path: PATH }))
      return serve(app.callback())
    },
  },
  {
    name: 'koa 3 (app.use with path)',
    start: (options: ReceiverOptions) => {
      const app = new Koa()
      app.use(koaWebhook({ ...options, path: PATH }))
      return serve(app.callback())
    },
  },
  {
    // router.all, not router.post, so the wrong-method case reaches the middleware (405).
    name: 'koa 3 (@koa/router)',
    start: (options: ReceiverOptions) => {
      const app = new Koa()
      const router = new Router()
      router.all(PATH, koaWebhook(options))
      app.use(router.routes())
      return serve(app.callback())
    },
  },
]
