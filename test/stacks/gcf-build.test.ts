/**
 * Google Cloud Functions (examples/gcf), copied out of the repository and installed
 * from the packed tarballs: `npm run build` (tsup), then `npm start`, the
 * Functions Framework's own CLI (`functions-framework --target=hooks`), serving
 * the example's src/index.ts; the shared conformance cases against it. The
 * framework reads every body before the function runs (`req.rawBody`), so an
 * oversize delivery is refused once it has arrived.
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { conformanceCases } from '../support/conformance-cases.js'
import { type Built, builtLine, builtStack, type StackRecipe } from './built-stack.js'
import { documentedCase } from './tested-versions.js'

const recipe: StackRecipe = {
  example: 'gcf',
  stack: 'Google Cloud Functions',
  files: [['gcf-app.ts', 'src/app.ts']],
  versions: ['@google-cloud/functions-framework'],
  path: '/hooks',
  buffersWholeBody: true,
}
const stack = builtStack(recipe)
let current: Built | undefined
afterAll(() => stack.remove())

describe('Google Cloud Functions (functions-framework, req.rawBody), copied out, built and served', () => {
  beforeAll(async () => {
    current = await stack.build()
    console.log(builtLine(recipe, current))
  }, 300_000)
  conformanceCases(stack.adapter('functions-framework'))
  documentedCase(() => current?.record)
})
