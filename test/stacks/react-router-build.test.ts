/**
 * React Router 7 framework mode (examples/react-router): `react-router build`,
 * served by `react-router-serve` (its Express server), the shared conformance
 * cases against the /hooks resource route's action, and the usual mistake: an
 * action that reads the body before handing the request over.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { builtStack, offline, root } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'

const stack = builtStack({
  example: 'react-router',
  files: [
    ['web-webhook.ts', 'app/lib/webhook.ts'],
    ['react-router-routes.ts', 'app/routes.ts'],
    ['react-router-eaten.ts', 'app/routes/eaten.ts'],
  ],
  build: [process.execPath, join(root, 'node_modules/@react-router/dev/bin.js'), 'build'],
  serve: [process.execPath, 'node_modules/@react-router/serve/bin.js', 'build/server/index.js'],
  path: '/hooks',
})

beforeAll(async () => {
  const seconds = await stack.build()
  console.log(
    `React Router: react-router build of examples/react-router${offline ? ' (no network)' : ''}: ${seconds.toFixed(1)} s`,
  )
}, 240_000)
afterAll(() => stack.remove())

describe('React Router 7 resource route action, built and served by react-router-serve', () => {
  conformanceCases(stack.adapter('react-router'))
  eatenBodyCase(stack, /request\.clone\(\)/, '/eaten')
})
