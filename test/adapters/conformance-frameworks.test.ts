import { describe } from 'vitest'
import { inProcessVersions } from '../stacks/tested-versions.js'
import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'
import { h3Adapters, koaAdapters } from './conformance-frameworks.js'
import { nestAdapters } from './nest-app.js'

forEachAdapter([...koaAdapters, ...h3Adapters, ...nestAdapters], conformanceCases)

describe('framework versions', () => {
  inProcessVersions('h3', 'current', { h3: 'h3v2' })
  inProcessVersions('h3', 'previous', { h3: 'h3' })
  // Both Nest recipes (here and nest.test.ts) run on the root's Nest, on Express.
  inProcessVersions('NestJS (platform-express)', 'previous', {
    '@nestjs/core': '@nestjs/core',
    '@nestjs/platform-express': '@nestjs/platform-express',
  })
})
