/**
 * Astro 5 (examples/astro): `astro build` with @astrojs/node standalone, served by
 * its own entry (node dist/server/entry.mjs), the shared conformance cases against
 * its /hooks endpoint, and the usual mistake: middleware that reads the body first.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { builtStack, offline, root } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'

const stack = builtStack({
  example: 'astro',
  files: [
    ['web-webhook.ts', 'src/lib/webhook.ts'],
    ['astro-middleware.ts', 'src/middleware.ts'],
  ],
  build: [process.execPath, join(root, 'node_modules/astro/astro.js'), 'build'],
  serve: [process.execPath, 'dist/server/entry.mjs'],
  path: '/hooks',
  // security.checkOrigin: a POST with no Content-Type counts as a cross-site form.
  refusesPostWithoutContentType: 403,
})

beforeAll(async () => {
  const seconds = await stack.build()
  console.log(
    `Astro: astro build of examples/astro${offline ? ' (no network)' : ''}: ${seconds.toFixed(1)} s`,
  )
}, 240_000)
afterAll(() => stack.remove())

describe('Astro 5 endpoint (@astrojs/node standalone), built and served', () => {
  conformanceCases(stack.adapter('astro'))
  eatenBodyCase(stack, /context\.request\.clone\(\)/)
})
