/**
 * Every adapter, started the way its README says, on port 0 of 127.0.0.1. Each
 * `start(options)` gives the URL of the webhook route and a `close()`.
 */
import { once } from 'node:events'
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook as expressWebhook } from '@affiliate-webhooks/express'
import { affiliateWebhook as fastifyWebhook } from '@affiliate-webhooks/fastify'
import { affiliateWebhookPages, affiliateWebhook as nextWebhook } from '@affiliate-webhooks/next'
import { affiliateWebhook as nodeWebhook } from '@affiliate-webhooks/node'
import express5 from 'express'
import express4 from 'express4'
import Fastify from 'fastify'
import type { NextApiRequest, NextApiResponse } from 'next'

export interface Running {
  /** Absolute URL of the webhook route. */
  url: string
  close(): Promise<void>
}

export interface Adapter {
  name: string
  /**
   * The platform buffers the whole body before the handler runs (API Gateway,
   * function URLs): an oversize body is refused only once it has all arrived.
   */
  buffersWholeBody?: boolean
  /**
   * The framework's cross-site form check answers a POST with no Content-Type
   * (403) before any route runs (Astro's `security.checkOrigin`). The service
   * always sends `application/json`, so deliveries never meet it.
   */
  refusesPostWithoutContentType?: number
  /**
   * The platform routes by method and answers 405 itself to one the app does not
   * export (Vercel's `export function POST`): still a 405, not the receiver's body.
   */
  platformAnswersOtherMethods?: boolean
  /**
   * The platform now and then resets a connection that is still sending with no
   * answer read at all (workerd behind Miniflare; Bun.serve, rarely; Nitro's server under load): the
   * streamed-oversize case tries a fresh connection once, which must then be
   * answered 413.
   */
  resetsWithoutAnswer?: boolean
  start(options: ReceiverOptions): Promise<Running>
}

export const PATH = '/hooks'

/** Serves a request listener on an ephemeral loopback port. */
export async function serve(listener: RequestListener, path = PATH): Promise<Running> {
  const server: Server = createServer(listener)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: async () => {
      const closed = once(server, 'close')
      server.close()
      // Keep-alive sockets of fetch would otherwise hold close() open.
      server.closeAllConnections()
      await closed
    },
  }
}

/**
 * What Next does on Node for an App Router route: the IncomingMessage becomes the
 * body of a Web Request (as an async iterable, not copied first), the Response is
 * written back. Used where `next start` would need a build; test/adapters/next-build.test.ts
 * runs the real thing.
 */
export function webToNode(handler: (request: Request) => Promise<Response>): RequestListener {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value)
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      ...(hasBody ? { body: req as unknown as BodyInit, duplex: 'half' } : {}),
    } as RequestInit)
    const response = await handler(request)
    response.headers.forEach((value, name) => {
      res.setHeader(name, value)
    })
    res.writeHead(response.status)
    res.end(Buffer.from(await response.arrayBuffer()))
  }
}

const onlyPath =
  (listener: RequestListener): RequestListener =>
  (req, res) => {
    if ((req.url ?? '').split('?', 1)[0] === PATH) listener(req, res)
    else res.writeHead(404).end()
  }

function expressAdapter(name: string, createApp: typeof express5): Adapter {
  return {
    name,
    start: (options) => {
      const app = createApp()
      // app.all, not app.post, so the wrong-method case reaches the adapter (405).
      app.all(PATH, expressWebhook(options))
      return serve(app)
    },
  }
}

export const adapters: Adapter[] = [
  {
    name: 'node',
    start: (options) => serve(nodeWebhook({ ...options, path: PATH })),
  },
  expressAdapter('express 4', express4 as unknown as typeof express5),
  expressAdapter('express 5', express5),
  {
    name: 'fastify',
    start: async (options) => {
      const app = Fastify()
      await app.register(fastifyWebhook, { ...options, path: PATH })
      await app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = app.server.address() as AddressInfo
      return { url: `http://127.0.0.1:${port}${PATH}`, close: () => app.close() }
    },
  },
  {
    name: 'next App handler',
    start: (options) => serve(onlyPath(webToNode(nextWebhook(options)))),
  },
  {
    // With `bodyParser: false`, Next hands the route the untouched IncomingMessage.
    name: 'next Pages handler',
    start: (options) => {
      const handler = affiliateWebhookPages(options)
      return serve(
        onlyPath((req, res) => {
          void handler(req as NextApiRequest, res as NextApiResponse)
        }),
      )
    },
  },
]
