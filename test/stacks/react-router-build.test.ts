/**
 * React Router framework mode (examples/react-router), copied out of the repository
 * and installed from the packed tarballs: `npm run build` (react-router build),
 * served by `npm start` (react-router-serve, its Express server), the shared
 * conformance cases against the /hooks resource route's action and the usual
 * mistake (an action that reads the body before handing the request over) on React
 * Router 8; then the same copy installed at React Router 7's versions (the code does
 * not differ) and the cases again.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { eatenBodyCase } from './eaten-body.js'
import { documentedCase } from './tested-versions.js'

const recipe: StackRecipe = {
  example: 'react-router',
  stack: 'React Router',
  files: [
    ['web-webhook.ts', 'app/lib/webhook.ts'],
    ['react-router-routes.ts', 'app/routes.ts'],
    ['react-router-eaten.ts', 'app/routes/eaten.ts'],
  ],
  versions: ['react-router', '@react-router/dev', '@react-router/serve'],
  path: '/hooks',
}
const stack = builtStack(recipe)
let current: Built | undefined
let previous: Built | undefined
afterAll(() => stack.remove())

describe('React Router 8 resource route action, copied out, built and served by react-router-serve', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 300_000)
  conformanceCases(stack.adapter('react-router 8'))
  eatenBodyCase(stack, /request\.clone\(\)/, '/eaten')
  documentedCase(() => current?.record)
})

describe('React Router 7 (the previous major): the same copy installed at its versions', () => {
  beforeAll(async () => {
    const v7 = '7.18.4'
    previous = await stack.rebuildAs({
      versions: {
        'react-router': v7,
        '@react-router/node': v7,
        '@react-router/serve': v7,
        '@react-router/dev': v7,
      },
    })
    console.log(builtLine(recipe, previous))
  }, 300_000)
  conformanceCases(stack.adapter('react-router 7'))
  documentedCase(() => previous?.record)
})
