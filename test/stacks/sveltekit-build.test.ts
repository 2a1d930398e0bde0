/**
 * SvelteKit (examples/sveltekit), copied out of the repository and installed from
 * the packed tarballs: `npm run build` (vite build, adapter-node), served by
 * `npm start` (node build/index.js), the shared conformance cases against its /hooks
 * +server.ts and the usual mistake (a handle hook that reads the body first) on
 * Kit 3; then the same copy installed at Kit 2's versions, with the three files
 * whose code differs there (test/stacks/apps/previous/sveltekit: svelte.config.js, the
 * `.svelte-kit` tsconfig, `$lib`), and the cases again.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'
import { documentedCase } from './tested-versions.js'

const recipe: StackRecipe = {
  example: 'sveltekit',
  stack: 'SvelteKit',
  files: [
    ['web-webhook.ts', 'src/lib/server/webhook.ts'],
    ['sveltekit-hooks.server.ts', 'src/hooks.server.ts'],
  ],
  versions: ['@sveltejs/kit', '@sveltejs/adapter-node'],
  path: '/hooks',
  // Kit 3's CSRF check: a POST with no Content-Type counts as a cross-site form (Kit 2 let it through).
  refusesPostWithoutContentType: 403,
}
const stack = builtStack(recipe)
let current: Built | undefined
let previous: Built | undefined
afterAll(() => stack.remove())

describe('SvelteKit 3 +server.ts (adapter-node), copied out, built and served', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 300_000)
  conformanceCases(stack.adapter('sveltekit 3'))
  eatenBodyCase(stack, /event\.request\.clone\(\)/)
  documentedCase(() => current?.record)
})

describe('SvelteKit 2 (the previous major): the same copy at its versions and its config', () => {
  beforeAll(async () => {
    previous = await stack.rebuildAs({
      versions: { '@sveltejs/kit': '2.70.4', '@sveltejs/adapter-node': '5.5.7' },
      files: [
        ['sveltekit/svelte.config.js', 'svelte.config.js'],
        ['sveltekit/vite.config.ts', 'vite.config.ts'],
        ['sveltekit/tsconfig.json', 'tsconfig.json'],
        ['sveltekit/+server.ts', 'src/routes/hooks/+server.ts'],
      ],
    })
    console.log(builtLine(recipe, previous))
  }, 300_000)
  conformanceCases(stack.adapter('sveltekit 2', {}))
  documentedCase(() => previous?.record)
})
