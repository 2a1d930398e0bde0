// Copied over examples/gcf/src/app.ts in the test's copy: the same registration on
// the Functions Framework that the example's src/index.ts calls, with each
// conformance case's options taken from the file BRIDGE_CONFIG_FILE names (a new
// receiver whenever it changes, so one server serves every case) and its handler
// and log lines sent back to the test.
import { readFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { type HttpFunction, http } from '@google-cloud/functions-framework'
// @ts-expect-error: plain JavaScript, copied beside this file
import { receiverPerCase } from './bridge-options.mjs'

/** The receiver of the current case, read per request (the server loads this module without one). */
const current = receiverPerCase(
  () => readFileSync(process.env.BRIDGE_CONFIG_FILE ?? '', 'utf8'),
  affiliateWebhook,
)

/** The example's registration; the options that count are the current case's. */
export function registerHooks(name: string, _options: ReceiverOptions): void {
  const hooks: HttpFunction = (req, res) => {
    const { handler, flush } = current()
    // The case reads the log right after the answer: the lines go first. The framework
    // has read the whole body before the function runs, so nothing is still arriving.
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
    res.end = ((...args: unknown[]) => {
      flush().finally(() => end(...args))
      return res
    }) as typeof res.end
    return handler(req, res)
  }
  http(name, hooks)
}
