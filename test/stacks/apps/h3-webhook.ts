// Copied over examples/nuxt/server/utils/webhook.ts in the test's copy: the same
// h3 handler the route exports, with the conformance case's options from the file
// BRIDGE_CONFIG_FILE names (a new receiver whenever it changes) and its handler and
// log lines sent back to the test.
import { readFileSync } from 'node:fs'
import { affiliateWebhook } from '@affiliate-webhooks/h3'
import { defineEventHandler, type EventHandler } from 'h3'
// @ts-expect-error: plain JavaScript, copied beside this file
import { bridgedOptions } from './bridge-options.mjs'

let made: { text: string; handler: EventHandler; flush: () => Promise<void> } | undefined

function make(text: string) {
  const config = JSON.parse(text)
  const post = (path: string, body: unknown) =>
    fetch(`${config.bridge}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  const bridged = bridgedOptions(config, post)
  return { text, handler: affiliateWebhook(bridged.options), flush: bridged.flush }
}

/** The receiver of the current case, read per request (a build loads this module without one). */
function current() {
  const text = readFileSync(process.env.BRIDGE_CONFIG_FILE ?? '', 'utf8')
  if (made?.text !== text) made = make(text)
  return made
}

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
