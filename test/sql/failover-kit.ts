/**
 * What the SQL failover tests share (PostgreSQL's and MariaDB's): a store on
 * a replicated server as the test opened it, a logger that keeps its lines, an
 * in-process receiver writing each event's effect through ctx.tx, and
 * deliveries timed.
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { EventStore } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { deliver, SECRET } from './sql-stores.js'

/** The service gives up on an answer after 10 s. */
export const SERVICE_TIMEOUT_MS = 10_000

/** A store the test opened, its handler's insert, and its pool. */
export interface Opened {
  store: EventStore<unknown>
  insert: (tx: unknown, eventId: string, conversionId: number) => Promise<unknown>
  /** A plain query on the store's own pool. */
  ping: () => Promise<unknown>
  end(): Promise<void>
}

export interface Logged {
  /** Every line, warnings and errors. */
  lines: string[]
  warnings: string[]
  logger: { warn: (...args: unknown[]) => void; error: (...args: unknown[]) => void }
}

export function capturedLog(): Logged {
  const lines: string[] = []
  const warnings: string[] = []
  const text = (args: unknown[]) => args.map(String).join(' ')
  return {
    lines,
    warnings,
    logger: {
      warn: (...args) => {
        warnings.push(text(args))
        lines.push(text(args))
      },
      error: (...args) => lines.push(text(args)),
    },
  }
}

/** A node:http receiver on a free loopback port, each event's effect written through ctx.tx. */
export async function receiver(
  opened: Opened,
  log: Logged['logger'],
): Promise<{ server: Server; url: string }> {
  const server = createServer(
    affiliateWebhook({
      secret: SECRET,
      logger: log,
      store: opened.store,
      async onConversion(conversion, event, ctx) {
        await opened.insert(ctx.tx, event.id, conversion.id)
      },
    }),
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }
}

/** Delivers `events` at once: each one's status and how long its answer took. */
export async function timedDeliveries(url: string, events: object[]) {
  return Promise.all(
    events.map(async (event) => {
      const started = performance.now()
      const status = await deliver(url, event)
      return { status, ms: performance.now() - started }
    }),
  )
}
