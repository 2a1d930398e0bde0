// Runs inside Bun, Deno and workerd. The receiver, its store and the adapter run
// here, in the runtime under test; only the publisher's handler and the log lines
// cross to the test process, over loopback HTTP (see test/runtime-bridge.ts).
import { affiliateWebhook } from '@affiliate-webhooks/web'
import { Hono } from 'hono'
import { bridgedOptions } from '../support/bridge-options.mjs'

export { bridgedOptions }

/**
 * The app under test: the web handler alone, or mounted on a Hono app the way
 * the README shows. `env` and `ctx` are what a Worker's fetch gets (undefined elsewhere).
 * @param {'web' | 'hono'} framework
 * @param {(env: unknown) => ReturnType<typeof bridgedOptions>} setup
 */
/** Hono's `c.executionCtx` throws where the runtime gives none (Bun, Deno). */
function executionCtx(c) {
  try {
    return c.executionCtx
  } catch {
    return undefined
  }
}

export function appFetch(framework, setup) {
  let bridged
  const handler = affiliateWebhook((env) => {
    bridged = setup(env)
    return bridged.options
  })
  const answer = async (request, env, ctx) => {
    const response = await handler(request, env)
    // workerd resets the connection, losing the answer, when a Worker that left a
    // body unread (the 413) has a subrequest in flight: those lines go after it.
    if (response.status === 413 && ctx) ctx.waitUntil(bridged.flush())
    else await bridged?.flush()
    return response
  }
  if (framework === 'web') return answer
  const app = new Hono()
  app.all('/hooks', (c) => answer(c.req.raw, c.env, executionCtx(c)))
  return (request, env, ctx) => app.fetch(request, env, ctx)
}
