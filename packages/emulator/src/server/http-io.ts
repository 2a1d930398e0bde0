import type { IncomingMessage, ServerResponse } from 'node:http'
import { DEFAULT_MAX_BODY_BYTES } from '@affiliate-webhooks/core/internal'
import { ApiError } from '../shared/api-error.js'

/** Largest request body, the spec's 1 MB: the same limit as a receiver's (core's one copy). */
export const MAX_BODY_BYTES = DEFAULT_MAX_BODY_BYTES
// Past this the client is not sending a request but a stream: stop listening.
const DRAIN_LIMIT = 64 * MAX_BODY_BYTES

/**
 * The request's body. Over 1 MB it reads on to the end (so the client gets the
 * answer instead of a reset) and then throws 413 `payload_too_large`.
 */
export function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) chunks.push(chunk)
      else if (size > DRAIN_LIMIT) req.destroy()
    })
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        reject(new ApiError('payload_too_large', 'The request body is over 1 MB.'))
      } else resolve(Buffer.concat(chunks))
    })
    req.on('error', reject)
    req.on('close', () => {
      if (!req.complete) reject(new ApiError('payload_too_large', 'The request body is over 1 MB.'))
    })
  })
}

/** The body as JSON (undefined when empty), or 400 `malformed_json`. */
export function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8')
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid JSON.')
  }
}

/** Writes the spec's envelope: `success`, `message`, and `data` or `error`. */
export function writeEnvelope(
  res: ServerResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  envelope: { message: string; data?: unknown; error?: unknown; extra?: Record<string, unknown> },
): void {
  const body = JSON.stringify({
    success: envelope.error === undefined,
    message: envelope.message,
    ...(envelope.error === undefined ? { data: envelope.data ?? null } : { error: envelope.error }),
    ...envelope.extra,
  })
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
  })
  res.end(body)
}
