/**
 * Astro (examples/astro), copied out of the repository and installed from the
 * packed tarballs: `npm run build` (astro build, @astrojs/node standalone), served
 * by `npm start` (node dist/server/entry.mjs), the shared conformance cases against
 * its /hooks endpoint and the usual mistake (middleware that reads the body first)
 * on Astro 7; then the same copy installed at Astro 5's versions (the code does not
 * differ) and the cases again.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'
import { documentedCase } from './tested-versions.js'

const recipe: StackRecipe = {
  example: 'astro',
  stack: 'Astro',
  files: [
    ['web-webhook.ts', 'src/lib/webhook.ts'],
    ['astro-middleware.ts', 'src/middleware.ts'],
  ],
  versions: ['astro', '@astrojs/node'],
  path: '/hooks',
  // security.checkOrigin: a POST with no Content-Type counts as a cross-site form.
  refusesPostWithoutContentType: 403,
}
const stack = builtStack(recipe)
let current: Built | undefined
let previous: Built | undefined
afterAll(() => stack.remove())

describe('Astro 7 endpoint (@astrojs/node standalone), copied out, built and served', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 300_000)
  conformanceCases(stack.adapter('astro 7'))
  eatenBodyCase(stack, /context\.request\.clone\(\)/)
  documentedCase(() => current?.record)
})

describe('Astro 5 (the previous major): the same copy installed at its versions', () => {
  beforeAll(async () => {
    previous = await stack.rebuildAs({ versions: { astro: '5.18.2', '@astrojs/node': '9.5.5' } })
    console.log(builtLine(recipe, previous))
  }, 300_000)
  conformanceCases(stack.adapter('astro 5'))
  documentedCase(() => previous?.record)
})
