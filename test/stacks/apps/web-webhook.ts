// Copied over an example's webhook module in the test's copy of the app: the same
// `webhook(request)` its routes call, with the conformance case's options taken from
// the file BRIDGE_CONFIG_FILE names (a new receiver whenever it changes, so one
// server serves every case) and its handler and log lines sent back to the test.
import { readFileSync } from 'node:fs'
import { affiliateWebhook } from '@affiliate-webhooks/web'
// @ts-expect-error: plain JavaScript, copied beside this file
import { receiverPerCase } from './bridge-options.mjs'

/** The receiver of the current case, read per request (a build loads this module without one). */
const current = receiverPerCase(
  () => readFileSync(process.env.BRIDGE_CONFIG_FILE ?? '', 'utf8'),
  affiliateWebhook,
)

export async function webhook(request: Request): Promise<Response> {
  const { handler, flush } = current()
  const response = await handler(request)
  // The case reads the log right after the answer: the lines go first. Not after a
  // 413: Astro's Node server, awaiting anything between the 413 and writing it while
  // the client still streams the rest, never writes it (the 413 cases read no log).
  if (response.status === 413) flush().catch(() => {})
  else await flush()
  return response
}
