/**
 * Koa 2, Koa 3 and NestJS, started the way their READMEs say, on port 0 of
 * 127.0.0.1, for the shared conformance cases.
 */
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook as koaWebhook } from '@affiliate-webhooks/koa'
import Router from '@koa/router'
import Koa from 'koa'
import Koa2 from 'koa2'
import { type Adapter, PATH, serve } from '../support/conformance-adapters.js'

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
