/**
 * Why an adapter found no raw body, and how each stack keeps it: one table, read
 * by the adapters (for their answer and log line) and by `doctor` (for the fix of
 * the stack that answered, named in the answer's `error.adapter`).
 */
import { WebhookError } from '../errors.js'

/** The adapters that can lose a body to code that ran before them. */
export type RawBodyAdapter =
  | 'node'
  | 'express'
  | 'koa'
  | 'fastify'
  | 'next'
  | 'next-pages'
  | 'web'
  | 'h3'
  | 'lambda'

/**
 * How the bytes were lost, as the runtime tells at once: read to the end (or
 * parsed), or held by another reader. A body that is merely slow is not lost:
 * it gets until the body deadline, then `body_timeout`.
 */
export type RawBodyLoss = 'consumed' | 'locked'

const LOSS: Readonly<Record<RawBodyLoss, string>> = {
  consumed: 'The body was read before the webhook handler, so its exact bytes are gone.',
  locked: 'Another reader holds the body stream, so the webhook cannot read its exact bytes.',
}

/** The fix, per stack: what to change where the body gets eaten. */
export const RAW_BODY_FIXES: Readonly<Record<RawBodyAdapter, string>> = {
  node: 'Read the body only in the webhook handler; a parser that runs first must keep the bytes in req.rawBody.',
  express:
    'Register the webhook before app.use(express.json()), or keep the bytes: express.json({ verify: rawBodySaver }), express.raw() on this route, or NestFactory.create(AppModule, { rawBody: true }) in NestJS.',
  koa: 'Put the webhook before app.use(bodyParser()), or leave the rawBody koa-bodyparser / @koa/bodyparser set on ctx.request.',
  fastify:
    'Let app.register(affiliateWebhook, { path }) add the route, or register fastify-raw-body (encoding: false) and give the route config: { rawBody: true }.',
  next: 'Next.js App Router: code before the webhook read the Request (request.json(), text()): pass it the untouched request; read a request.clone() elsewhere.',
  'next-pages':
    'Add `export const config = { api: { bodyParser: false } }` to this pages/api file.',
  web: "A middleware or hook read the Request: read a request.clone() there (Astro: context.request.clone(); SvelteKit: event.request.clone()), and turn the framework's body parsing off for the route (Elysia: parse: 'none').",
  h3: 'h3 1 (Nuxt 4): use readBody(event) or readRawBody(event) in middleware, which keep the bytes, not toWebRequest(event).json(). h3 2 (Nitro 3): readBody(event) drains event.req; read await event.req.clone().json() there.',
  lambda:
    'Pass the integration event untouched: its body must still be the string (or base64) API Gateway or the function URL sent.',
}

/** The fix for an adapter named in an answer, or undefined for one this copy does not know. */
export function rawBodyFixOf(adapter: string | undefined): string | undefined {
  return adapter === undefined
    ? undefined
    : (RAW_BODY_FIXES as Readonly<Record<string, string | undefined>>)[adapter]
}

/** The `raw_body_unavailable` error an adapter throws: what happened, and that stack's fix. */
export function rawBodyUnavailable(adapter: RawBodyAdapter, loss: RawBodyLoss): WebhookError {
  return new WebhookError('raw_body_unavailable', `${LOSS[loss]} ${RAW_BODY_FIXES[adapter]}`, {
    adapter,
  })
}
