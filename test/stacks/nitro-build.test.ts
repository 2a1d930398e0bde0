/**
 * Nitro 3 (examples/nitro), copied out of the repository and installed from the
 * packed tarballs: `npm run build` (nitro build, the node-server preset), served
 * by `npm start` (node .output/server/index.mjs), the shared conformance cases
 * against its /hooks file route on h3 2, and the usual mistake: middleware that
 * reads `event.req.json()` before the route.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'
import { documentedCase } from './tested-versions.js'

const recipe: StackRecipe = {
  example: 'nitro',
  stack: 'Nitro',
  files: [
    ['nitro-webhook.ts', 'utils/webhook.ts'],
    ['nitro-middleware.ts', 'middleware/eat-body.ts'],
  ],
  versions: ['nitro', 'h3'],
  path: '/hooks',
}
const stack = builtStack(recipe)
let current: Built | undefined
afterAll(() => stack.remove())

describe('Nitro 3 file route (@affiliate-webhooks/h3 on h3 2), copied out, built and served', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 300_000)
  conformanceCases(stack.adapter('nitro 3'))
  eatenBodyCase(stack, /event\.req\.clone\(\)/)
  documentedCase(() => current?.record)
})
