// Runs inside Bun, Deno and workerd. The receiver, its store and the adapter run
// here, in the runtime under test; only the publisher's handler and the log lines
// cross to the test process, over loopback HTTP (see test/runtime-bridge.ts).
import { affiliateWebhook } from '@affiliate-webhooks/web'
import { Hono } from 'hono'

/**
 * The receiver options a conformance case asked for, with `onConversion` and the
 * logger forwarded to the test process through `post(path, body)`.
 * @param {{ secret: string, maxBodyBytes?: number, logger: boolean }} config
 * @param {(path: string, body: unknown) => Promise<Response>} post
 */
export function bridgedOptions(config, post) {
  // Lines are kept and sent together when the answer is ready (see appFetch).
  const lines = []
  const log = (level) => (line) => {
    lines.push({ level, line })
  }
  const options = {
    secret: config.secret,
    logger: config.logger ? { warn: log('warn'), error: log('error') } : false,
    onConversion: async (conversion, event) => {
      const answer = await post('/conversion', { conversion, event })
      if (!answer.ok) throw new Error(await answer.text())
    },
  }
  if (config.maxBodyBytes !== undefined) options.maxBodyBytes = config.maxBodyBytes
  return {
    options,
    /** Sends the lines logged so far, so they arrive before the answer does. */
    flush: async () => {
      if (lines.length > 0) await post('/log', lines.splice(0))
    },
  }
}

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
