/**
 * Google Cloud Functions (examples/gcf): the example's registration on the real
 * Functions Framework, served by the framework's own Express server
 * (`getTestServer`, the server its CLI starts), runs the shared conformance cases.
 */
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { getTestServer } from '@google-cloud/functions-framework/testing'
import { describe } from 'vitest'
import { registerHooks } from '../../examples/gcf/src/app.js'
import type { Adapter, Running } from '../support/conformance-adapters.js'
import { conformanceCases } from '../support/conformance-cases.js'
import { inProcessVersions } from './tested-versions.js'

let functions = 0

const gcf: Adapter = {
  name: 'functions-framework',
  // The framework parses every body before the function runs.
  buffersWholeBody: true,
  start: async (options: ReceiverOptions): Promise<Running> => {
    // One function per case: the registry is global to the process.
    const name = `hooks${++functions}`
    registerHooks(name, options)
    const server = getTestServer(name)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    return {
      url: `http://127.0.0.1:${port}/hooks`,
      close: async () => {
        const closed = once(server, 'close')
        server.close()
        server.closeAllConnections()
        await closed
      },
    }
  },
}

describe('Google Cloud Functions (functions-framework 5, req.rawBody)', () => {
  conformanceCases(gcf)
})

describe('Cloud Functions versions', () => {
  inProcessVersions('Google Cloud Functions', 'current', {
    '@google-cloud/functions-framework': '@google-cloud/functions-framework',
  })
})
