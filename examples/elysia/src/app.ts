import { Elysia } from 'elysia'
import { webhook } from './webhook.js'

/**
 * The webhook route with Elysia's body parsing off (`parse: 'none'`): Elysia
 * would otherwise read the body before the handler, and the exact bytes with it.
 * `all`, so other methods get the receiver's 405 too.
 */
export const app = new Elysia().all('/hooks', ({ request }) => webhook(request), {
  parse: 'none',
})
