/**
 * Hostile inputs, as an attacker (or a broken client) would send them: one list
 * of attacks, run against every adapter over raw loopback sockets by
 * test/adapters/hostile.test.ts, and by bench/hostile.ts for the table of
 * answers, times, handler calls and log lines.
 */
import { connect } from 'node:net'
import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'

export const HOSTILE_SECRET = 'whsec_hostile_inputs_suite'

/** What one raw request got: the status and code, or none; and how long until then. */
export interface Got {
  status: number | 'none'
  code: string | undefined
  ms: number
  /** The server closed the connection within a second of its answer (or before one). */
  closed: boolean
}

/** One step of what the client sends after the headers. */
type Step = { write: Uint8Array } | { wait: number } | { close: true }

/**
 * Sends a request over a raw socket: the head, then the steps, and reads the
 * answer until `capMs`. No answer (the server said nothing, or closed without a
 * status line) is `status: 'none'`.
 */
export function rawRequest(url: string, head: string, steps: Step[], capMs: number): Promise<Got> {
  const { hostname, port } = new URL(url)
  const started = performance.now()
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    let text = ''
    let done = false
    let answeredMs: number | undefined
    let serverClosed = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(cap)
      clearTimeout(linger)
      socket.destroy()
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]
      resolve({
        status: status === undefined ? 'none' : Number(status),
        code: /"code":"(\w+)"/.exec(text)?.[1],
        ms: answeredMs ?? Math.round(performance.now() - started),
        closed: serverClosed,
      })
    }
    const cap = setTimeout(finish, capMs)
    let linger: ReturnType<typeof setTimeout> | undefined
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
      // One answer is all we wait for (its head and a small JSON body), then a
      // second for the server to close the connection.
      if (
        answeredMs === undefined &&
        (/\r\n\r\n[\s\S]*\}\s*$/.test(text) || /\r\n\r\n$/.test(text))
      ) {
        answeredMs = Math.round(performance.now() - started)
        linger = setTimeout(finish, 1_000)
      }
    })
    socket.on('end', () => {
      serverClosed = true
      finish()
    })
    socket.on('close', finish)
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A client still writing its trickle when the server answers and closes
      // gets EPIPE or ECONNRESET on its next write, sometimes before the 'end'
      // of the server's FIN is read: after an answer, that is the server closing.
      if (answeredMs !== undefined && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) {
        serverClosed = true
      }
      finish()
    })
    socket.on('connect', async () => {
      socket.write(head)
      for (const step of steps) {
        if (done) return
        if ('write' in step) socket.write(step.write)
        else if ('wait' in step) await new Promise((r) => setTimeout(r, step.wait))
        else {
          socket.destroy()
          return
        }
      }
    })
  })
}

const utf8 = new TextEncoder()

function headOf(url: string, headers: Record<string, string>): string {
  const { host, pathname } = new URL(url)
  const lines = Object.entries({ host, ...headers }).map(([name, value]) => `${name}: ${value}`)
  return `POST ${pathname} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`
}

let nextConversion = 700_000

/** A signed delivery of a fresh event of a conversion of its own, as head and body. */
async function signed(event = buildConversionEvent({ conversion: { id: nextConversion++ } })) {
  const delivery = await signedDelivery({ secret: HOSTILE_SECRET, event, attempt: 1 })
  return { headers: delivery.headers, body: utf8.encode(delivery.body), event }
}

/** What an attack expects, given the receiver's bounds. */
export interface Expect {
  /** The status, or 'none' where nobody is left to answer. */
  status: number | 'none'
  code?: string
  /** The bound the answer must come within, ms (before the suite's margin). */
  withinMs: number
  /** Handler calls at the end. */
  calls: number
  /**
   * Lines about the deliveries themselves (warn and error) the whole attack may
   * write, at most; besides them, the failure streak warns at 5, 10 and 15
   * failed answers in a row (telemetry/failure-streak.ts), at most 3 lines.
   */
  maxLines: number
}

export interface Bounds {
  bodyTimeoutMs: number
  answerWithinMs: number
}

export interface Attack {
  name: string
  /** How many at once: 1, or a flood. */
  copies: number
  /** The handler never settles. */
  hangs?: boolean
  /** Runs the attack once against the URL; the cap is how long to wait at most. */
  send(url: string, capMs: number): Promise<Got>
  expect(bounds: Bounds): Expect
}

/** `Content-Length: 300`, 20 bytes, then silence. */
const lyingLength = (copies: number): Attack => ({
  name: copies === 1 ? 'lying Content-Length' : `lying Content-Length x${copies}`,
  copies,
  async send(url, capMs) {
    const { headers, body } = await signed()
    const head = headOf(url, { ...headers, 'content-length': '300' })
    return rawRequest(url, head, [{ write: body.subarray(0, 20) }], capMs)
  },
  expect: (b) => ({
    status: 408,
    code: 'body_timeout',
    withinMs: b.bodyTimeoutMs,
    calls: 0,
    maxLines: 2,
  }),
})

/** Chunked: one chunk of 20 bytes, then silence. */
const stall = (copies: number): Attack => ({
  name: copies === 1 ? 'chunked stall' : `chunked stall x${copies}`,
  copies,
  async send(url, capMs) {
    const { headers, body } = await signed()
    const head = headOf(url, { ...headers, 'transfer-encoding': 'chunked' })
    const chunk = utf8.encode(`14\r\n${new TextDecoder().decode(body.subarray(0, 20))}\r\n`)
    return rawRequest(url, head, [{ write: chunk }], capMs)
  },
  expect: (b) => ({
    status: 408,
    code: 'body_timeout',
    withinMs: b.bodyTimeoutMs,
    calls: 0,
    maxLines: 2,
  }),
})

/** A signed body, exact Content-Length, one byte at a time, each well inside any idle bound. */
const trickle = (copies: number, everyMs: number): Attack => ({
  name: copies === 1 ? 'signed trickle' : `signed trickle x${copies}`,
  copies,
  async send(url, capMs) {
    const { headers, body } = await signed()
    const head = headOf(url, { ...headers, 'content-length': String(body.byteLength) })
    const steps: Step[] = []
    for (const byte of body) steps.push({ write: Uint8Array.of(byte) }, { wait: everyMs })
    return rawRequest(url, head, steps, capMs)
  },
  expect: (b) => ({
    status: 408,
    code: 'body_timeout',
    withinMs: b.bodyTimeoutMs,
    calls: 0,
    maxLines: 2,
  }),
})

/** Half the body, then the client goes away. */
const disconnect = (copies: number): Attack => ({
  name: copies === 1 ? 'mid-body disconnect' : `mid-body disconnect x${copies}`,
  copies,
  async send(url, capMs) {
    const { headers, body } = await signed()
    const head = headOf(url, { ...headers, 'content-length': String(body.byteLength) })
    return rawRequest(
      url,
      head,
      [{ write: body.subarray(0, body.byteLength >> 1) }, { wait: 50 }, { close: true }],
      capMs,
    )
  },
  expect: () => ({ status: 'none', withinMs: 100, calls: 0, maxLines: 2 }),
})

/** A whole signed delivery whose handler never settles. */
const hang = (copies: number): Attack => ({
  name: copies === 1 ? 'handler hangs' : `handler hangs x${copies}`,
  copies,
  hangs: true,
  async send(url, capMs) {
    const { headers, body } = await signed()
    const head = headOf(url, { ...headers, 'content-length': String(body.byteLength) })
    return rawRequest(url, head, [{ write: body }], capMs)
  },
  expect: (b) => ({
    status: 503,
    code: 'handler_timeout',
    withinMs: b.answerWithinMs,
    calls: copies,
    // One line per delivery: each is a signed event whose handler the user wrote.
    maxLines: copies,
  }),
})

/** A signed conversion event dated 2099. */
const future: Attack = {
  name: 'event from 2099',
  copies: 1,
  async send(url, capMs) {
    const { headers, body } = await signed(
      buildConversionEvent({
        createdAt: '2099-01-01T00:00:00.000Z',
        conversion: { id: nextConversion++ },
      }),
    )
    const head = headOf(url, { ...headers, 'content-length': String(body.byteLength) })
    return rawRequest(url, head, [{ write: body }], capMs)
  },
  expect: () => ({ status: 400, code: 'invalid_payload', withinMs: 1_000, calls: 0, maxLines: 1 }),
}

/** A signed delivery whose signature header carries `extra` more characters. */
const longSignature = (name: string, extra: number, status: number, code?: string): Attack => ({
  name,
  copies: 1,
  async send(url, capMs) {
    const { headers, body } = await signed()
    const signature = `${headers['service-signature']},x=${'a'.repeat(extra)}`
    const head = headOf(url, {
      ...headers,
      'service-signature': signature,
      'content-length': String(body.byteLength),
    })
    return rawRequest(url, head, [{ write: body }], capMs)
  },
  // Node answers 431 itself, before any receiver: nothing is logged.
  expect: () => ({
    status,
    ...(code === undefined ? {} : { code }),
    withinMs: 1_000,
    calls: 0,
    maxLines: code === undefined ? 0 : 1,
  }),
})

/** Every attack; `flood` copies of the floods. */
export function attacks(flood: number, trickleEveryMs: number): Attack[] {
  return [
    lyingLength(1),
    stall(1),
    trickle(1, trickleEveryMs),
    disconnect(1),
    hang(1),
    future,
    longSignature('signature header of 9 KiB', 9_000, 400, 'malformed_signature'),
    longSignature('headers over 16 KiB', 17_000, 431),
    lyingLength(flood),
    stall(flood),
    trickle(flood, trickleEveryMs),
    disconnect(flood),
    hang(Math.min(flood, 20)),
  ]
}

/** The attacks a platform that buffers the whole body (Lambda) can meet: those after the body. */
export const afterTheBody = (attack: Attack) => attack.hangs === true || attack === future

/** The receiver every attack meets: a recording handler (or one that never settles), a log. */
export function hostileOptions(
  hangs: boolean,
  bounds: Partial<Bounds>,
): {
  options: ReceiverOptions
  calls: string[]
  lines: string[]
} {
  const calls: string[] = []
  const lines: string[] = []
  const options: ReceiverOptions = {
    secret: HOSTILE_SECRET,
    onConversion: (_conversion, event) => {
      calls.push(event.id)
      return hangs ? new Promise(() => {}) : undefined
    },
    logger: {
      warn: (line: string) => lines.push(`warn ${line}`),
      error: (line: string) => lines.push(`error ${line}`),
    },
    ...bounds,
  }
  return { options, calls, lines }
}

/** The failure streak's own warnings (at 5, 10, 15 failures in a row), apart from the deliveries' lines. */
export const isStreakWarning = (line: string) => / answers in a row were not 2xx/.test(line)

/** Runs `copies` of an attack at once; the slowest answer and the answers seen. */
export async function runAttack(url: string, attack: Attack, capMs: number) {
  const got = await Promise.all(
    Array.from({ length: attack.copies }, () => attack.send(url, capMs)),
  )
  const statuses = new Map<string, number>()
  for (const g of got) {
    const key = g.status === 'none' ? 'none' : `${g.status} ${g.code ?? ''}`.trim()
    statuses.set(key, (statuses.get(key) ?? 0) + 1)
  }
  return { got, slowestMs: Math.max(...got.map((g) => g.ms)), statuses }
}
