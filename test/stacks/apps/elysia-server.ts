// Replaces examples/elysia/src/server.ts in the test's copy: the example's app, plus
// the usual mistake on /eaten: a route that uses `body`, so Elysia parses it first.
import { Elysia } from 'elysia'
import { app } from './app.js'
import { webhook } from './webhook.js'

new Elysia()
  .use(app)
  .post('/eaten', ({ body, request }) => (body === undefined ? 'no body' : webhook(request)))
  .listen({ port: Number(process.env.PORT), hostname: process.env.HOST ?? '127.0.0.1' })
