/**
 * Elysia on Bun (examples/elysia), copied out of the repository and installed from
 * the packed tarballs: `npm run build` (bun build of its server), served by
 * `npm start` (bun dist/server.js; Bun from the `bun` dev dependency, first on the
 * PATH), the shared conformance cases against /hooks (`parse: 'none'`), and the
 * usual mistake: a route that uses `body`, which Elysia parses first.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { runtimeBinary } from '../runtimes/runtime-bridge.js'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'
import { documentedCase } from './tested-versions.js'

const bun = runtimeBinary('bun')
// Only Bun on the copy's PATH, not the repository's other binaries.
const bunBin = mkdtempSync(join(tmpdir(), 'aw-bun-'))
symlinkSync(bun, join(bunBin, 'bun'))
const recipe: StackRecipe = {
  example: 'elysia',
  stack: 'Elysia',
  files: [
    ['web-webhook.ts', 'src/webhook.ts'],
    ['elysia-server.ts', 'src/server.ts'],
  ],
  versions: ['elysia'],
  path: '/hooks',
  binPath: [bunBin],
  runtime: { name: 'Bun', command: bun },
}
const stack = builtStack(recipe)
let current: Built | undefined
afterAll(async () => {
  await stack.remove()
  rmSync(bunBin, { recursive: true, force: true })
})

describe('Elysia on Bun (parse: none), copied out, built and served', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 180_000)
  conformanceCases(stack.adapter('elysia'))
  eatenBodyCase(stack, /parse: 'none'/, '/eaten')
  documentedCase(() => current?.record)
})
