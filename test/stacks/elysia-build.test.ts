/**
 * Elysia on Bun (examples/elysia): `bun build` of its server, run by Bun (the `bun`
 * dev dependency), the shared conformance cases against /hooks (`parse: 'none'`),
 * and the usual mistake: a route that uses `body`, which Elysia parses first.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { runtimeBinary } from '../runtimes/runtime-bridge.js'
import { conformanceCases } from '../support/conformance-cases.js'
import { builtStack, offline } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'

const bun = runtimeBinary('bun')
const stack = builtStack({
  example: 'elysia',
  files: [
    ['web-webhook.ts', 'src/webhook.ts'],
    ['elysia-server.ts', 'src/server.ts'],
  ],
  build: [bun, 'build', 'src/server.ts', '--target', 'bun', '--outdir', 'dist'],
  serve: [bun, 'dist/server.js'],
  path: '/hooks',
})

beforeAll(async () => {
  const seconds = await stack.build()
  console.log(
    `Elysia: bun build of examples/elysia${offline ? ' (no network)' : ''}: ${seconds.toFixed(1)} s`,
  )
}, 120_000)
afterAll(() => stack.remove())

describe('Elysia on Bun (parse: none), built and served', () => {
  conformanceCases(stack.adapter('elysia'))
  eatenBodyCase(stack, /parse: 'none'/, '/eaten')
})
