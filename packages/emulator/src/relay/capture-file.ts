import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * One delivery as `listen --save` captured it: the request line, the headers and
 * the body's exact bytes (base64, so any byte survives). Never a secret: the
 * relay does not know it.
 */
export interface CapturedDelivery {
  version: 1
  /** When the relay received it, ISO 8601. */
  receivedAt: string
  method: string
  /** Path and query as requested. */
  path: string
  /** Header names lowercase, as received (repeated headers joined with ", "). */
  headers: Record<string, string>
  /** The body, byte for byte. */
  bodyBase64: string
  /** The body as text, for people, when it is valid UTF-8. Not used to re-send. */
  bodyText?: string
}

/** A capture file that cannot be read: missing, not JSON, not a capture. */
export class CaptureFileError extends Error {
  override readonly name = 'CaptureFileError'
}

const strict = new TextDecoder('utf-8', { fatal: true })

/** The capture of one request, with its body's exact bytes. */
export function captureOf(request: {
  method: string
  path: string
  headers: Record<string, string>
  body: Uint8Array
  receivedAt?: Date
}): CapturedDelivery {
  const capture: CapturedDelivery = {
    version: 1,
    receivedAt: (request.receivedAt ?? new Date()).toISOString(),
    method: request.method,
    path: request.path,
    headers: request.headers,
    bodyBase64: Buffer.from(request.body).toString('base64'),
  }
  try {
    capture.bodyText = strict.decode(request.body)
  } catch {
    // Not UTF-8: the base64 is the only copy, which is the point of keeping it.
  }
  return capture
}

/** The body's exact bytes. */
export const bodyOf = (capture: CapturedDelivery): Uint8Array =>
  new Uint8Array(Buffer.from(capture.bodyBase64, 'base64'))

// Set by the transport for each new request, never carried over from a capture.
const HOP_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
])

/** The headers to send a captured delivery again with: its own, less the transport's. */
export const resendHeaders = (capture: CapturedDelivery): Record<string, string> =>
  Object.fromEntries(Object.entries(capture.headers).filter(([name]) => !HOP_HEADERS.has(name)))

/** Writes a capture into `dir` under a name that sorts by time; resolves to its path. */
export async function writeCapture(dir: string, capture: CapturedDelivery): Promise<string> {
  await mkdir(dir, { recursive: true })
  const stamp = capture.receivedAt.replace(/[-:]/g, '').replace('.', '-')
  const event = (capture.headers['service-event-id'] ?? 'unknown')
    .replace(/[^\w-]/g, '_')
    .slice(0, 64)
  const attempt =
    (capture.headers['service-delivery-attempt'] ?? 'x').replace(/\D/g, '').slice(0, 2) || 'x'
  const path = join(dir, `${stamp}-${event}-${attempt}.json`)
  // wx: two deliveries in the same millisecond never overwrite each other.
  for (let n = 0; ; n++) {
    const file = n === 0 ? path : path.replace(/\.json$/, `-${n}.json`)
    try {
      // Only its owner may read it: it holds every header and the conversion data.
      await writeFile(file, `${JSON.stringify(capture, null, 2)}\n`, { flag: 'wx', mode: 0o600 })
      return file
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n > 100) throw error
    }
  }
}

/** Reads and checks a capture file. */
export async function readCapture(path: string): Promise<CapturedDelivery> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new CaptureFileError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : code}`)
  }
  let value: Partial<CapturedDelivery>
  try {
    value = JSON.parse(text)
  } catch {
    throw new CaptureFileError(`${path} is not JSON: not a file written by listen --save`)
  }
  if (value?.version !== 1) {
    throw new CaptureFileError(`${path} is not a capture of version 1 (written by listen --save)`)
  }
  const headers = value.headers
  if (
    typeof value.bodyBase64 !== 'string' ||
    typeof headers !== 'object' ||
    headers === null ||
    !Object.values(headers).every((v) => typeof v === 'string')
  ) {
    throw new CaptureFileError(`${path} is missing its headers or bodyBase64`)
  }
  return value as CapturedDelivery
}
