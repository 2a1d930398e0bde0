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
  const pending = new Set()
  const log = (level) => (line) => {
    const sent = post('/log', { level, line }).then(
      () => pending.delete(sent),
      () => pending.delete(sent),
    )
    pending.add(sent)
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
    /** Waits for the log lines sent so far, so they arrive before the answer does. */
    flush: () => Promise.all([...pending]),
  }
}

/**
 * The app under test: the web handler alone, or mounted on a Hono app the way
 * the README shows. `env` is what a Worker's fetch gets (undefined elsewhere).
 * @param {'web' | 'hono'} framework
 * @param {(env: unknown) => ReturnType<typeof bridgedOptions>} setup
 */
export function appFetch(framework, setup) {
  let bridged
  const handler = affiliateWebhook((env) => {
    bridged = setup(env)
    return bridged.options
  })
  const answer = async (request, env) => {
    const response = await handler(request, env)
    await bridged?.flush()
    return response
  }
  if (framework === 'web') return answer
  const app = new Hono()
  app.all('/hooks', (c) => answer(c.req.raw, c.env))
  return (request, env) => app.fetch(request, env)
}
