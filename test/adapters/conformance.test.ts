import { describe } from 'vitest'
import { inProcessVersions } from '../stacks/tested-versions.js'
import { adapters } from '../support/conformance-adapters.js'
import { conformanceCases, forEachAdapter } from '../support/conformance-cases.js'

forEachAdapter(adapters, conformanceCases)

describe('framework versions', () => {
  inProcessVersions('Express', 'current', { express: 'express' })
  inProcessVersions('Express', 'previous', { express: 'express4' })
  inProcessVersions('Fastify', 'current', { fastify: 'fastify' })
})
