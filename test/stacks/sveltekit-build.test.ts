/**
 * SvelteKit 2 (examples/sveltekit): `vite build` with adapter-node, served by
 * its own output (node build/index.js), the shared conformance cases against
 * its /hooks +server.ts, and the usual mistake: a handle hook that reads the body first.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { builtStack, offline, root } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'

const stack = builtStack({
  example: 'sveltekit',
  files: [
    ['web-webhook.ts', 'src/lib/server/webhook.ts'],
    ['sveltekit-hooks.server.ts', 'src/hooks.server.ts'],
  ],
  build: [process.execPath, join(root, 'node_modules/vite/bin/vite.js'), 'build'],
  serve: [process.execPath, 'build/index.js'],
  path: '/hooks',
})

beforeAll(async () => {
  const seconds = await stack.build()
  console.log(
    `SvelteKit: vite build of examples/sveltekit${offline ? ' (no network)' : ''}: ${seconds.toFixed(1)} s`,
  )
}, 240_000)
afterAll(() => stack.remove())

describe('SvelteKit 2 +server.ts (adapter-node), built and served', () => {
  conformanceCases(stack.adapter('sveltekit'))
  eatenBodyCase(stack, /event\.request\.clone\(\)/)
})
