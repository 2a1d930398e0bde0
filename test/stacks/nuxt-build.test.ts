/**
 * Nuxt 4 (examples/nuxt), copied out of the repository and installed from the
 * packed tarballs: `npm run build` (nuxt build), served by `npm start` (Nitro's own
 * node-server output, node .output/server/index.mjs), the shared conformance cases
 * against its /hooks server route, and the usual mistake: server middleware that
 * reads `toWebRequest(event).json()` before the route. Nuxt 4 runs Nitro 2 and h3 1;
 * h3 2 (Nitro 3) is in the adapter matrix (test/adapters/conformance-frameworks.ts)
 * and packages/h3's own tests.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'
import { documentedCase } from './tested-versions.js'

const recipe: StackRecipe = {
  example: 'nuxt',
  stack: 'Nuxt',
  files: [
    ['h3-webhook.ts', 'server/utils/webhook.ts'],
    ['nuxt-middleware.ts', 'server/middleware/eat-body.ts'],
  ],
  versions: ['nuxt', 'nitropack', 'h3'],
  path: '/hooks',
  // Seen once in three loaded runs: the 413 lost to a reset before the client read it.
  resetsWithoutAnswer: true,
}
const stack = builtStack(recipe)
let current: Built | undefined
afterAll(() => stack.remove())

describe('Nuxt 4 server route (@affiliate-webhooks/h3), copied out, built and served by Nitro', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 300_000)
  conformanceCases(stack.adapter('nuxt 4'))
  eatenBodyCase(stack, /readBody\(event\)/)
  documentedCase(() => current?.record)
})
