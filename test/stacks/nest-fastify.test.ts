/**
 * NestJS 12 on the Fastify platform (examples/nest-fastify): the example's app,
 * listening on a free port, runs the shared conformance cases.
 */
import type { AddressInfo } from 'node:net'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { describe } from 'vitest'
import { createApp } from '../../examples/nest-fastify/src/app.js'
import type { Adapter, Running } from '../support/conformance-adapters.js'
import { conformanceCases } from '../support/conformance-cases.js'
import { inProcessVersions } from './tested-versions.js'

const nestFastify: Adapter = {
  name: 'nest on fastify',
  start: async (options: ReceiverOptions): Promise<Running> => {
    const app = await createApp(options)
    await app.listen(0, '127.0.0.1')
    const { port } = app.getHttpServer().address() as AddressInfo
    return { url: `http://127.0.0.1:${port}/hooks`, close: () => app.close() }
  },
}

describe('NestJS 12 on @nestjs/platform-fastify (app.register(affiliateWebhook))', () => {
  conformanceCases(nestFastify)
})

describe('NestJS versions', () => {
  inProcessVersions(
    'NestJS (platform-fastify)',
    'current',
    { '@nestjs/core': '@nestjs/core', '@nestjs/platform-fastify': '@nestjs/platform-fastify' },
    'nest-fastify',
  )
})
