/**
 * The one shape every adapter has. An adapter hands this factory the runtime's
 * own ways to read a request (method, headers, exact bytes); the factory does the
 * rest: the POST check, the body read with its limit and deadline, the refusal's
 * log line, the receiver. What is left in an adapter is writing the answer back.
 */

import { isWebhookError, WebhookError } from '../errors.js'
import { createReceiver } from '../receiver/create-receiver.js'
import type { Receiver, ReceiverOptions } from '../receiver/receiver-types.js'
import type { Logger } from '../telemetry/delivery-log.js'
import type { ReceiveResult } from './answer.js'
import { type BodyProgress, readBodyWithin } from './body-deadline.js'
import type { HeadersInput } from './headers.js'

/** How an adapter reads one request of its runtime. */
export interface AdapterIO<Req> {
  /** The adapter's package, for its log lines: '@affiliate-webhooks/express'. */
  name: string
  method(request: Req): string | undefined
  headers(request: Req): HeadersInput
  /**
   * The exact bytes of the body, at most `limit` of them. Rejects with a
   * `WebhookError` (`payload_too_large`, `raw_body_unavailable`) for an answer, or
   * with any other error when the client went away (no answer is written). A
   * body that others consumed or hold is refused at once, from the runtime's
   * own state; one still arriving is waited for until `signal` aborts (the body
   * deadline, answered by the factory), when the reader lets go of the stream.
   */
  body(
    request: Req,
    limit: number,
    signal: AbortSignal,
    progress?: BodyProgress,
  ): Promise<Uint8Array> | Uint8Array
}

/** What {@link createAdapter} gives an adapter. */
export interface AdapterCore<Req, Env = unknown> {
  /**
   * The answer for one request, or undefined when the client went away and
   * nothing should be written. Never rejects. `env` goes to the options function
   * on the first request, when the options are one.
   */
  handle(request: Req, env?: Env): Promise<ReceiveResult | undefined>
  /** The receiver, made now if the options are a function not called yet. */
  receiver(env?: Env): Receiver
}

/**
 * Options as a value make the receiver now, so a bad secret throws at start-up.
 * As a function they are read on the first request: a build step that loads the
 * module without secrets (Next), or a runtime that hands them to each request
 * (Workers' `env`), passes that to the function.
 */
export type AdapterOptions<Env = unknown, Tx = undefined> =
  | ReceiverOptions<Tx>
  | ((env: Env) => ReceiverOptions<Tx>)

/** Makes the adapter's receiver and request handling from the runtime's read functions. */
export function createAdapter<Req, Env = unknown, Tx = undefined>(
  options: AdapterOptions<Env, Tx>,
  io: AdapterIO<Req>,
): AdapterCore<Req, Env> {
  let made: Receiver | undefined = typeof options === 'function' ? undefined : start(options, io)
  const receiver = (env?: Env): Receiver => {
    made ??= start((options as (env: Env | undefined) => ReceiverOptions<Tx>)(env), io)
    return made
  }
  const handle = async (request: Req, receiver: Receiver) => {
    if (io.method(request) !== 'POST') return receiver.reject('method_not_allowed')
    // The request's start, for both deadlines: the body's and the answer's.
    const startedAt = Date.now()
    let rawBody: Uint8Array
    try {
      rawBody = await readBodyWithin(
        (limit, signal, progress) => io.body(request, limit, signal, progress),
        receiver.maxBodyBytes,
        receiver.bodyTimeoutMs,
        startedAt,
      )
    } catch (error) {
      // Logged like every unacknowledged delivery: status, code, the claimed event
      // id, and (for a body already taken) the fix for this stack. A client that
      // went away mid-body is a refusal too, counted with the others; it gets
      // no answer.
      const refusal = isWebhookError(error) ? error : new WebhookError('body_incomplete')
      const result = receiver.reject(refusal, undefined, io.headers(request))
      return isWebhookError(error) ? result : undefined
    }
    return receiver.receive({ headers: io.headers(request), rawBody, startedAt })
  }
  return { receiver, handle: (request, env) => handle(request, receiver(env)) }
}

function start<Tx>(options: ReceiverOptions<Tx>, io: { name: string }): Receiver {
  const receiver = createReceiver(options)
  const host = ephemeralHost()
  if (
    options.store === undefined &&
    options.queue === undefined &&
    host !== undefined &&
    receiver.logger
  ) {
    warnOnce(
      receiver.logger,
      `${io.name}: the memory store lives in one ${host.where}, and the service's retries can reach another, so a retried event can run twice. ${host.instead}`,
    )
  }
  return receiver
}

/** Where a process-local memory store cannot see the other instances, and what to use there. */
function ephemeralHost(): { where: string; instead: string } | undefined {
  const g = globalThis as {
    navigator?: { userAgent?: string }
    process?: { env?: Record<string, string | undefined> }
  }
  if (g.navigator?.userAgent === 'Cloudflare-Workers') {
    return {
      where: 'Cloudflare Workers isolate',
      instead:
        'Pass as `store` an EventStore on state all isolates share, such as a Durable Object or D1 (see @affiliate-webhooks/web, "Stores on Workers").',
    }
  }
  if (g.process?.env?.AWS_LAMBDA_FUNCTION_NAME) {
    return {
      where: 'AWS Lambda execution environment',
      instead: 'Pass a shared store as `store`: redisStore({ url }) or your own EventStore.',
    }
  }
  return undefined
}

const warnedLoggers = new WeakSet<Logger>()
function warnOnce(logger: Logger, line: string): void {
  if (warnedLoggers.has(logger)) return
  warnedLoggers.add(logger)
  try {
    logger.warn(line)
  } catch {
    // A logger that throws must not stop the receiver from starting.
  }
}

/** Where body parsers that keep the bytes put them (express.raw, rawBodySaver, fastify-raw-body, Nest's rawBody). */
interface ParsedRequest {
  body?: unknown
  rawBody?: unknown
}

const utf8 = new TextEncoder()

/**
 * The bytes a body parser that ran before the adapter kept, if any: `rawBody` as
 * bytes or as the UTF-8 string fastify-raw-body keeps by default, else a `body`
 * that is still bytes (express.raw). Undefined when none were kept.
 */
export function keptBody(request: ParsedRequest, limit: number): Uint8Array | undefined {
  const { rawBody, body } = request
  const kept =
    rawBody instanceof Uint8Array
      ? rawBody
      : typeof rawBody === 'string'
        ? utf8.encode(rawBody)
        : body instanceof Uint8Array
          ? body
          : undefined
  if (kept !== undefined && kept.byteLength > limit) throw tooLarge(limit)
  return kept
}

/** The `payload_too_large` error every reader throws at its limit. */
export function tooLarge(limit: number): WebhookError {
  return new WebhookError('payload_too_large', `The body is larger than ${limit} bytes.`)
}

/**
 * Collects a body's chunks up to a limit; the one bounded reader behind the Node
 * stream reader and the Web stream reader.
 */
export class BoundedBody {
  readonly #limit: number
  readonly #chunks: Uint8Array[] = []
  #size = 0

  constructor(limit: number) {
    this.#limit = limit
  }

  /** Keeps the chunk; false (and nothing kept) once the body passes the limit. */
  add(chunk: Uint8Array): boolean {
    this.#size += chunk.byteLength
    if (this.#size > this.#limit) return false
    this.#chunks.push(chunk)
    return true
  }

  /** The chunks joined, without a copy when there is only one. */
  bytes(): Uint8Array {
    const chunks = this.#chunks
    if (chunks.length === 1) return chunks[0] as Uint8Array
    const bytes = new Uint8Array(this.#size)
    let offset = 0
    for (const chunk of chunks) {
      bytes.set(chunk, offset)
      offset += chunk.byteLength
    }
    return bytes
  }
}
