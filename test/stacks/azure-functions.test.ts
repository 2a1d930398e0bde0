/**
 * Azure Functions v4 (examples/azure-functions): the example's handler driven
 * in-process, since the Functions host (Core Tools) cannot run offline. A real HTTP
 * server does what the host does: buffers the body, builds an `HttpRequest` of
 * `@azure/functions` from it, calls the handler and writes its HttpResponseInit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { HttpRequest, InvocationContext } from '@azure/functions'
import { describe, expect, it } from 'vitest'
import { hooksHandler } from '../../examples/azure-functions/src/app.js'
import { type Adapter, PATH, serve } from '../support/conformance-adapters.js'
import { conformanceCases, SECRET } from '../support/conformance-cases.js'
import { inProcessVersions } from './tested-versions.js'

async function bytesOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const azure: Adapter = {
  name: 'azure functions v4 (in-process host)',
  buffersWholeBody: true,
  start: (options: ReceiverOptions) => {
    const handler = hooksHandler(options)
    return serve(async (req: IncomingMessage, res: ServerResponse) => {
      if ((req.url ?? '').split('?', 1)[0] !== PATH) return void res.writeHead(404).end()
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
      }
      const body = await bytesOf(req)
      const request = new HttpRequest({
        method: req.method ?? 'GET',
        url: `http://${req.headers.host}${req.url}`,
        headers,
        ...(body.byteLength > 0 ? { body: { bytes: body } } : {}),
      })
      const answer = await handler(request, new InvocationContext())
      res.writeHead(answer.status ?? 200, answer.headers as Record<string, string>)
      res.end(answer.body as string)
    })
  },
}

describe('Azure Functions v4 HttpRequest through @affiliate-webhooks/web', () => {
  conformanceCases(azure)

  it('answers 500 raw_body_unavailable at once when a wrapper read request.json() first', async () => {
    const lines: string[] = []
    const handler = hooksHandler({
      secret: SECRET,
      onConversion: () => {},
      logger: { warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) },
    })
    const event = buildConversionEvent()
    const { headers, body } = await signedDelivery({ secret: SECRET, event })
    const request = new HttpRequest({
      method: 'POST',
      url: 'http://localhost/hooks',
      headers,
      body: { string: body },
    })
    await request.json()
    const answer = await handler(request, new InvocationContext())
    expect(answer.status).toBe(500)
    expect(JSON.parse(answer.body as string)).toMatchObject({
      error: { code: 'raw_body_unavailable', adapter: 'web' },
    })
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^affiliate-webhooks: 500 raw_body_unavailable ${event.id} .*request\\.clone\\(\\)`,
        ),
      ),
    ])
  })
})

describe('Azure Functions versions', () => {
  inProcessVersions('Azure Functions', 'current', { '@azure/functions': '@azure/functions' })
})
