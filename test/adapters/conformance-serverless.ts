/**
 * The Lambda handler behind each integration that can put it on the web: a small
 * node:http server plays API Gateway (REST, HTTP API) or the function URL. Each
 * request becomes that integration's event (a fixture from test/adapters/fixtures/lambda,
 * cloned, with what the integration takes from the request filled in); the event
 * and the result cross as JSON, as they do between Lambda and the handler; the
 * result is written back as the integration would.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import {
  affiliateWebhook,
  type LambdaHttpEvent,
  type LambdaHttpResult,
} from '@affiliate-webhooks/lambda'
import { type Adapter, PATH, serve } from '../support/conformance-adapters.js'

export type Integration = 'rest' | 'rest-binary' | 'http-api' | 'function-url'

const FIXTURE: Record<Integration, string> = {
  rest: 'api-gateway-rest.json',
  'rest-binary': 'api-gateway-rest.json',
  'http-api': 'http-api.json',
  'function-url': 'function-url.json',
}

/** A fresh copy of the committed fixture event for an integration. */
export function fixtureEvent(integration: Integration): Record<string, unknown> {
  const file = new URL(`./fixtures/lambda/${FIXTURE[integration]}`, import.meta.url)
  return JSON.parse(readFileSync(file, 'utf8'))
}

/** What an integration takes from one HTTP request. */
export interface GatewayRequest {
  method: string
  /** Path and query as the client sent them. */
  url: string
  /** Names as the client wrote them, in order, repeats kept (Node's rawHeaders, paired). */
  headers: [string, string][]
  body: Uint8Array
  sourceIp: string
}

// What the client sends, as opposed to what the integration adds (X-Forwarded-*, trace ids).
const FROM_CLIENT = new Set([
  'accept',
  'content-length',
  'content-type',
  'service-delivery-attempt',
  'service-event-id',
  'service-signature',
  'user-agent',
])
// Hop-by-hop or replaced by the integration's own.
const NOT_FORWARDED = new Set(['connection', 'host', 'keep-alive', 'transfer-encoding'])

// Function URLs and HTTP APIs pass these as text and base64-encode every other body.
const TEXT_TYPE = /^(text\/|application\/(json|javascript|xml)\b|application\/[^;]*\+(json|xml)\b)/i

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ')
/** `01/Jun/2024:12:00:00 +0000`, the format of requestTime and time. */
function clf(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0')
  return `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`
}

function gatewayHeaders(fixture: Record<string, unknown>): [string, string][] {
  return Object.entries(fixture).filter(
    (entry): entry is [string, string] =>
      typeof entry[1] === 'string' && !FROM_CLIENT.has(entry[0].toLowerCase()),
  )
}

function query(search: string): {
  single: Record<string, string>
  multi: Record<string, string[]>
} {
  const single: Record<string, string> = {}
  const multi: Record<string, string[]> = {}
  for (const [name, value] of new URLSearchParams(search)) {
    single[name] = value
    multi[name] = [...(multi[name] ?? []), value]
  }
  return { single, multi }
}

/**
 * The event API Gateway REST sends for this request (payload 1.0): header names
 * in the client's case, `headers` with the last value of each, `multiValueHeaders`
 * with all; the body as text, or base64 with `binaryMediaTypes: ['*\/*']`.
 */
function restEvent(request: GatewayRequest, binary: boolean): Record<string, unknown> {
  const event = fixtureEvent('rest') as Record<string, unknown> & {
    headers: Record<string, string>
    requestContext: Record<string, unknown> & { identity: Record<string, unknown> }
  }
  const { pathname, search } = new URL(request.url, 'http://gateway')
  const all = [...gatewayHeaders(event.headers), ...request.headers]
  const headers: Record<string, string> = {}
  const multiValueHeaders: Record<string, string[]> = {}
  for (const [name, value] of all) {
    headers[name] = value
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value]
  }
  const now = new Date()
  const { single, multi } = query(search)
  const hasQuery = Object.keys(single).length > 0
  Object.assign(event, {
    path: pathname,
    httpMethod: request.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? single : null,
    multiValueQueryStringParameters: hasQuery ? multi : null,
    body:
      request.body.byteLength === 0
        ? null
        : binary
          ? Buffer.from(request.body).toString('base64')
          : new TextDecoder().decode(request.body),
    isBase64Encoded: binary && request.body.byteLength > 0,
  })
  Object.assign(event.requestContext, {
    httpMethod: request.method,
    path: `/${event.requestContext.stage}${pathname}`,
    requestId: randomUUID(),
    requestTime: clf(now),
    requestTimeEpoch: now.getTime(),
  })
  const userAgent = all.find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? null
  Object.assign(event.requestContext.identity, { sourceIp: request.sourceIp, userAgent })
  return event
}

/**
 * The event an HTTP API (payload 2.0) or a function URL sends: lower-case names,
 * repeats joined with commas, cookies apart; text bodies as text, others base64.
 */
function v2Event(integration: Integration, request: GatewayRequest): Record<string, unknown> {
  const event = fixtureEvent(integration) as Record<string, unknown> & {
    headers: Record<string, string>
    requestContext: Record<string, unknown> & { http: Record<string, unknown> }
  }
  const { pathname, search } = new URL(request.url, 'http://gateway')
  const headers: Record<string, string> = {}
  const cookies: string[] = []
  for (const [name, value] of [...gatewayHeaders(event.headers), ...request.headers]) {
    const key = name.toLowerCase()
    if (key === 'cookie') cookies.push(...value.split(/;\s*/))
    else headers[key] = key in headers ? `${headers[key]},${value}` : value
  }
  const { multi } = query(search)
  // Fields the integration leaves out when the request has nothing for them.
  delete event.cookies
  delete event.queryStringParameters
  delete event.body
  const now = new Date()
  const text = TEXT_TYPE.test(headers['content-type'] ?? '')
  Object.assign(event, {
    rawPath: pathname,
    rawQueryString: search.replace(/^\?/, ''),
    headers,
    ...(cookies.length > 0 ? { cookies } : {}),
    ...(Object.keys(multi).length > 0
      ? {
          queryStringParameters: Object.fromEntries(
            Object.entries(multi).map(([name, values]) => [name, values.join(',')]),
          ),
        }
      : {}),
    ...(request.body.byteLength > 0
      ? {
          body: text
            ? new TextDecoder().decode(request.body)
            : Buffer.from(request.body).toString('base64'),
        }
      : {}),
    isBase64Encoded: request.body.byteLength > 0 && !text,
  })
  Object.assign(event.requestContext, {
    requestId: randomUUID(),
    time: clf(now),
    timeEpoch: now.getTime(),
  })
  Object.assign(event.requestContext.http, {
    method: request.method,
    path: pathname,
    sourceIp: request.sourceIp,
    userAgent: headers['user-agent'] ?? '',
  })
  return event
}

/** The event `integration` hands the function for `request`. */
export function toEvent(integration: Integration, request: GatewayRequest): LambdaHttpEvent {
  const event =
    integration === 'rest' || integration === 'rest-binary'
      ? restEvent(request, integration === 'rest-binary')
      : v2Event(integration, request)
  return event as unknown as LambdaHttpEvent
}

/** What each integration takes at most; past it the gateway answers 413 itself. */
const GATEWAY_LIMIT: Record<Integration, number> = {
  rest: 10 * 1024 * 1024,
  'rest-binary': 10 * 1024 * 1024,
  'http-api': 10 * 1024 * 1024,
  'function-url': 6 * 1024 * 1024,
}

/**
 * Reads the whole request body, as a gateway does before the function runs, up
 * to the gateway's own limit (undefined past it). So on AWS, and here, a body
 * over the receiver's `maxBodyBytes` is refused only after the whole upload.
 */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).byteLength
    if (size > limit) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

function pairs(raw: string[]): [string, string][] {
  const list: [string, string][] = []
  for (let i = 0; i + 1 < raw.length; i += 2) list.push([raw[i] as string, raw[i + 1] as string])
  return list
}

/** Plays `integration` in front of a handler: HTTP request in, event to the handler, result out. */
export function gateway(
  integration: Integration,
  handler: (event: LambdaHttpEvent, context: unknown) => Promise<LambdaHttpResult>,
) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/'
    // The APIs route only /hooks to the function; a function URL sends it every path.
    if (integration !== 'function-url' && url.split('?', 1)[0] !== PATH) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}')
      return
    }
    const body = await readBody(req, GATEWAY_LIMIT[integration])
    if (body === undefined) {
      res.writeHead(413, { 'content-type': 'application/json' })
      res.end('{"message":"Request Entity Too Large"}')
      return
    }
    const event = toEvent(integration, {
      method: req.method ?? 'GET',
      url,
      headers: pairs(req.rawHeaders).filter(([name]) => !NOT_FORWARDED.has(name.toLowerCase())),
      body,
      sourceIp: req.socket.remoteAddress ?? '',
    })
    // Event and result cross the Lambda boundary as JSON.
    const result = JSON.parse(
      JSON.stringify(
        await handler(JSON.parse(JSON.stringify(event)), { awsRequestId: randomUUID() }),
      ),
    ) as LambdaHttpResult & { multiValueHeaders?: Record<string, string[]> }
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
      res.setHeader(name, values)
    }
    res.writeHead(result.statusCode, result.headers)
    res.end(Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'))
  }
}

function lambdaAdapter(name: string, integration: Integration): Adapter {
  return {
    name,
    buffersWholeBody: true,
    start: (options: ReceiverOptions) => serve(gateway(integration, affiliateWebhook(options))),
  }
}

export const lambdaAdapters: Adapter[] = [
  lambdaAdapter('lambda behind API Gateway REST (payload 1.0)', 'rest'),
  lambdaAdapter("lambda behind API Gateway REST, binaryMediaTypes ['*/*'] (base64)", 'rest-binary'),
  lambdaAdapter('lambda behind API Gateway HTTP API (payload 2.0)', 'http-api'),
  lambdaAdapter('lambda behind a function URL', 'function-url'),
]
