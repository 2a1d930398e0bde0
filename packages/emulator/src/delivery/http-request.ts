import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { performance } from 'node:perf_hooks'
import { ANSWER_TIMEOUT_MS, RESPONSE_BODY_CHARS } from './schedule.js'

/** One HTTP attempt of a delivery. */
export interface AttemptRequest {
  /** http:// or https:// URL of the receiver. */
  url: string
  /** Request headers, e.g. from `deliveryHeaders`. */
  headers: Readonly<Record<string, string>>
  body: string | Uint8Array
  /** Real ms before the attempt counts as timed out. Default 10 000 (the spec's limit). */
  timeoutMs?: number
  /** Connection pools to reuse; see {@link createAgents}. */
  agents?: Agents
}

/** What the service's delivery history records of an attempt. */
export interface AttemptResult {
  /** 2xx within the time limit. A redirect is not followed and is a failure. */
  ok: boolean
  /** HTTP status of the answer; absent when there was no answer. */
  responseStatus?: number
  /** First 500 characters of the answer body. */
  responseBody?: string
  /** Why there was no answer at all: timeout, refused connection, reset... */
  errorMessage?: string
  /** `timeout` or `connection_error` when there was no answer. */
  errorKind?: 'timeout' | 'connection_error'
  /** Real time from sending to the last byte of the answer (or the failure), ms. */
  durationMs: number
}

/** Keep-alive connection pools for http and https. */
export interface Agents {
  http: HttpAgent
  https: HttpsAgent
  destroy(): void
}

/** Keep-alive pools, at most `maxSockets` connections per receiver. */
export function createAgents(maxSockets: number): Agents {
  const http = new HttpAgent({ keepAlive: true, maxSockets })
  const https = new HttpsAgent({ keepAlive: true, maxSockets })
  return {
    http,
    https,
    destroy() {
      http.destroy()
      https.destroy()
    },
  }
}

// Enough to keep 500 characters of any encoding; the rest is drained unread.
const KEEP_BYTES = RESPONSE_BODY_CHARS * 4

/** First `RESPONSE_BODY_CHARS` characters (code points, so no half surrogate pair). */
export function truncateAnswer(text: string): string {
  if (text.length <= RESPONSE_BODY_CHARS) return text
  return Array.from(text).slice(0, RESPONSE_BODY_CHARS).join('')
}

function readAnswer(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let kept = 0
    response.on('data', (chunk: Buffer) => {
      if (kept < KEEP_BYTES) {
        chunks.push(chunk)
        kept += chunk.length
      }
    })
    response.on('end', () =>
      resolve(truncateAnswer(Buffer.concat(chunks).subarray(0, KEEP_BYTES).toString('utf8'))),
    )
    response.on('error', reject)
    response.on('aborted', () => reject(new Error('the answer was cut off')))
  })
}

const describeError = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const code = (error as NodeJS.ErrnoException).code
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
}

/**
 * Sends one attempt and reports it as the service's delivery history would:
 * status, first 500 characters of the answer, duration. Never rejects.
 */
export function sendAttempt(request: AttemptRequest): Promise<AttemptResult> {
  const timeoutMs = request.timeoutMs ?? ANSWER_TIMEOUT_MS
  const started = performance.now()
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10
  return new Promise<AttemptResult>((resolve) => {
    let settled = false
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...result, durationMs: elapsed() })
    }
    let url: URL
    try {
      url = new URL(request.url)
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new Error(`unsupported protocol ${url.protocol}`)
      }
    } catch (error) {
      finish({ ok: false, errorKind: 'connection_error', errorMessage: describeError(error) })
      return
    }
    const body = typeof request.body === 'string' ? Buffer.from(request.body) : request.body
    const isHttps = url.protocol === 'https:'
    const send = isHttps ? httpsRequest : httpRequest
    const agent = request.agents
      ? isHttps
        ? request.agents.https
        : request.agents.http
      : undefined
    const req = send(url, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(body.byteLength) },
      ...(agent ? { agent } : {}),
    })
    // The limit is on the whole answer, status line to last byte.
    const timer = setTimeout(() => {
      finish({
        ok: false,
        errorKind: 'timeout',
        errorMessage: `no complete answer within ${timeoutMs} ms`,
      })
      req.destroy()
    }, timeoutMs)
    req.on('error', (error) =>
      finish({ ok: false, errorKind: 'connection_error', errorMessage: describeError(error) }),
    )
    req.on('response', (response) => {
      const status = response.statusCode ?? 0
      readAnswer(response).then(
        (text) =>
          finish({
            ok: status >= 200 && status < 300,
            responseStatus: status,
            responseBody: text,
          }),
        (error) =>
          finish({
            ok: false,
            responseStatus: status,
            errorKind: 'connection_error',
            errorMessage: describeError(error),
          }),
      )
    })
    req.end(body)
  })
}
