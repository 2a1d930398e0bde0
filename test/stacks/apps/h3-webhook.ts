// Copied over examples/nuxt/server/utils/webhook.ts in the test's copy: the same
// h3 handler the route exports, with the conformance case's options from the file
// BRIDGE_CONFIG_FILE names (a new receiver whenever it changes) and its handler and
// log lines sent back to the test.
import { readFileSync } from 'node:fs'
import { affiliateWebhook } from '@affiliate-webhooks/h3'
import { defineEventHandler } from 'h3'
// @ts-expect-error: plain JavaScript, copied beside this file
import { receiverPerCase } from './bridge-options.mjs'

/** The receiver of the current case, read per request (a build loads this module without one). */
const current = receiverPerCase(
  () => readFileSync(process.env.BRIDGE_CONFIG_FILE ?? '', 'utf8'),
  affiliateWebhook,
)

export const webhook = defineEventHandler(async (event) => {
  const { handler, flush } = current()
  const answer = await handler(event)
  // The case reads the log right after the answer: the lines go first. Not after a
  // 413: Astro's Node server, awaiting anything between the 413 and writing it while
  // the client still streams the rest, never writes it (the 413 cases read no log).
  if (event.node.res.statusCode === 413) flush().catch(() => {})
  else await flush()
  return answer
})
