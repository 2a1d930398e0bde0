import { Buffer } from 'node:buffer'
import type { HeadersInput, ReceiveResult, ReceiverOptions } from '@affiliate-webhooks/core'
import { createAdapter, rawBodyUnavailable, tooLarge } from '@affiliate-webhooks/core/internal'

/** Options of {@link affiliateWebhook}: the receiver's (secret, handlers, store, limits). */
export type LambdaWebhookOptions<Tx = undefined> = ReceiverOptions<Tx>

/**
 * The fields this handler reads from an API Gateway REST API event (payload
 * format 1.0, also an HTTP API's 1.0 integration). `APIGatewayProxyEvent` from
 * `@types/aws-lambda` fits it; so does the whole event as AWS sends it.
 */
export interface ApiGatewayV1Event {
  httpMethod: string
  /** Last value of each header, names as the client wrote them. */
  headers?: Readonly<Record<string, string | undefined>> | null | undefined
  /** Every value of each header; preferred when present. */
  multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null | undefined
  body?: string | null | undefined
  isBase64Encoded?: boolean | undefined
}

/**
 * The fields this handler reads from an HTTP API event (payload format 2.0) or a
 * Lambda function URL event, which has the same shape. `APIGatewayProxyEventV2`
 * and `LambdaFunctionURLEvent` from `@types/aws-lambda` fit it.
 */
export interface ApiGatewayV2Event {
  requestContext: { http: { method: string } }
  /** Lower-case names; repeated headers joined with commas. */
  headers?: Readonly<Record<string, string | undefined>> | undefined
  body?: string | undefined
  isBase64Encoded?: boolean | undefined
}

/** An HTTP event from API Gateway (REST or HTTP API) or a function URL. */
export type LambdaHttpEvent = ApiGatewayV1Event | ApiGatewayV2Event

/**
 * The answer, in the shape every one of the three accepts (`APIGatewayProxyResult`
 * and `APIGatewayProxyStructuredResultV2` of `@types/aws-lambda`).
 */
export interface LambdaHttpResult {
  statusCode: number
  headers: Record<string, string>
  body: string
  isBase64Encoded: false
}

/**
 * A Lambda handler: `export const handler = affiliateWebhook(opts)`. The second
 * argument (Lambda's context) is accepted and not used.
 */
export type LambdaWebhookHandler = (
  event: LambdaHttpEvent,
  context?: unknown,
) => Promise<LambdaHttpResult>

const isV2 = (event: LambdaHttpEvent): event is ApiGatewayV2Event =>
  typeof (event as ApiGatewayV2Event).requestContext?.http?.method === 'string'

function method(event: LambdaHttpEvent): string | undefined {
  return isV2(event) ? event.requestContext.http.method : event.httpMethod
}

function headers(event: LambdaHttpEvent): HeadersInput {
  if (!isV2(event) && event.multiValueHeaders) return event.multiValueHeaders
  return event.headers ?? {}
}

/**
 * The exact bytes the client sent: base64 when the integration encoded them
 * (binary media types, function URLs' non-text bodies), else the body is the
 * text the integration decoded as UTF-8, and UTF-8 gives its bytes back.
 */
function body(event: LambdaHttpEvent, limit: number): Uint8Array {
  const text: unknown = event.body ?? ''
  // A hand-made test event with a parsed object as body: the signed bytes are not in it.
  if (typeof text !== 'string') throw rawBodyUnavailable('lambda', 'consumed')
  const bytes = Buffer.from(text, event.isBase64Encoded ? 'base64' : 'utf8')
  if (bytes.byteLength > limit) throw tooLarge(limit)
  return bytes
}

/** The core's answer as the result API Gateway and function URLs expect. */
export function toLambdaResult(result: ReceiveResult): LambdaHttpResult {
  // Connection is hop-by-hop: the gateway owns the client's connection, not the function.
  const { connection: _hopByHop, ...headers } = result.headers as Record<string, string>
  return {
    statusCode: result.status,
    headers,
    body: result.body,
    isBase64Encoded: false,
  }
}

/**
 * `export const handler = affiliateWebhook({ secret, onConversion })` for API
 * Gateway REST (payload 1.0), HTTP API (2.0) and function URLs. Answers POST only.
 */
export function affiliateWebhook<Tx = undefined>(
  options: LambdaWebhookOptions<Tx>,
): LambdaWebhookHandler {
  const adapter = createAdapter<LambdaHttpEvent, unknown, Tx>(options, {
    name: '@affiliate-webhooks/lambda',
    method,
    headers,
    body,
  })
  return async (event) => {
    const result = await adapter.handle(event)
    // The event holds the whole body and reading it only throws WebhookErrors, so
    // there is always an answer; the fallback keeps a 2xx impossible all the same.
    return toLambdaResult(result ?? adapter.receiver().reject('raw_body_unavailable'))
  }
}
