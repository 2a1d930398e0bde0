// Copied over examples/nitro/utils/webhook.ts in the test's copy: the same h3
// handler the route exports, on h3 2, with the conformance case's options from the
// file BRIDGE_CONFIG_FILE names (a new receiver whenever it changes) and its
// handler and log lines sent back to the test.
import { readFileSync } from 'node:fs'
import { affiliateWebhook } from '@affiliate-webhooks/h3'
import { defineHandler } from 'h3'
// @ts-expect-error: plain JavaScript, copied beside this file
import { receiverPerCase } from './bridge-options.mjs'

/** The receiver of the current case, read per request (a build loads this module without one). */
const current = receiverPerCase(
  () => readFileSync(process.env.BRIDGE_CONFIG_FILE ?? '', 'utf8'),
  affiliateWebhook,
)

export const webhook = defineHandler(async (event) => {
  const { handler, flush } = current()
  const answer = await handler(event)
  // The case reads the log right after the answer: the lines go first (not after
  // a 413, whose cases read no log, while the client may still be sending).
  if (answer instanceof Response && answer.status === 413) flush().catch(() => {})
  else await flush()
  return answer
})
