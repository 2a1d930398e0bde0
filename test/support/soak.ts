/**
 * A soak of bad requests against one adapter on loopback: bad signatures over
 * keep-alive connections, with lying lengths and mid-body disconnects mixed in,
 * a bounded number in flight. Measures the heap after a warm-up and after the
 * soak, each after a full garbage collection, so a leak per refused request
 * shows as growth. Used by bench/soak.ts (200,000 requests) and by
 * test/adapters/soak.test.ts (a smaller run).
 */
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import { rawRequest } from './hostile-cases.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** The heap in use after full collections, bytes. */
export async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return process.memoryUsage().heapUsed
}

export interface SoakResult {
  sent: number
  statuses: Map<string, number>
  ms: number
}

/** One in `every` requests is a lying length, one in `every` (offset) a disconnect. */
const EVERY = 50
/** Bad-signature requests written at once on one connection (HTTP/1.1 pipelining). */
const BATCH = 50

/**
 * Sends `total` bad requests, at most `concurrency` connections at once: bad
 * signatures pipelined in batches over kept-alive connections (a cheap client,
 * so the receiver is what is measured), with lying lengths and mid-body
 * disconnects on connections of their own.
 */
export async function soak(url: string, total: number, concurrency = 16): Promise<SoakResult> {
  const delivery = await signedDelivery({
    secret: 'whsec_not_the_receivers_secret',
    event: buildConversionEvent(),
  })
  const body = Buffer.from(delivery.body)
  const { hostname, port, pathname, host } = new URL(url)
  const lines = Object.entries({
    ...delivery.headers,
    host,
    'content-length': String(body.byteLength),
  })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n')
  const one = Buffer.concat([Buffer.from(`POST ${pathname} HTTP/1.1\r\n${lines}\r\n\r\n`), body])
  const statuses = new Map<string, number>()
  const count = (key: string, n = 1) => statuses.set(key, (statuses.get(key) ?? 0) + n)
  const head = (length: number) =>
    `POST ${pathname} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`
  const lyingLength = () =>
    rawRequest(url, head(300), [{ write: body.subarray(0, 20) }], 5_000).then((got) =>
      count(String(got.status)),
    )
  const disconnect = () =>
    rawRequest(url, head(300), [{ write: body.subarray(0, 20) }, { close: true }], 5_000).then(() =>
      count('disconnect'),
    )
  /** `n` bad signatures on one kept-alive connection, pipelined; resolves when all are answered. */
  const badSignatures = (socket: Socket, n: number) =>
    new Promise<void>((resolve, reject) => {
      let seen = 0
      let text = ''
      const onData = (chunk: string) => {
        text += chunk
        // Every whole status line so far; a cut one waits for the next chunk.
        for (let at = text.indexOf('HTTP/1.1 '); at !== -1 && at + 12 <= text.length; ) {
          count(text.slice(at + 9, at + 12))
          seen++
          text = text.slice(at + 12)
          at = text.indexOf('HTTP/1.1 ')
        }
        // Done once n answers began and the last one's (chunked) body has ended.
        if (seen >= n && text.endsWith('0\r\n\r\n')) {
          socket.off('data', onData)
          socket.off('error', reject)
          resolve()
        }
      }
      socket.on('data', onData)
      socket.on('error', reject)
      socket.write(Buffer.concat(Array.from({ length: n }, () => one)))
    })

  const started = performance.now()
  let next = 0
  const worker = async () => {
    const socket = connect(Number(port), hostname)
    socket.setEncoding('latin1')
    await once(socket, 'connect')
    for (let n = next; n < total; n = next) {
      if (n % EVERY === 0) {
        next++
        await lyingLength()
      } else if (n % EVERY === 1) {
        next++
        await disconnect()
      } else {
        // Up to the next lying length, at most BATCH.
        const batch = Math.min(BATCH, EVERY - (n % EVERY), total - n)
        next += batch
        await badSignatures(socket, batch)
      }
    }
    socket.destroy()
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { sent: total, statuses, ms: performance.now() - started }
}
