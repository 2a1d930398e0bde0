import type { ServerResponse } from 'node:http'
import type { Engine } from '../delivery/engine.js'

// Many changes come in a burst (a clock advance makes dozens): one event per burst.
const COALESCE_MS = 30
// A comment line now and then keeps proxies and the browser from closing an idle stream.
const KEEPALIVE_MS = 15_000

/**
 * The console's server-sent events: `attempt` after each attempt (which
 * delivery, which attempt, its result) and `change` after any other change. The
 * page fetches what it shows again on either; nothing secret is ever sent.
 */
export class LiveEvents {
  private readonly clients = new Set<ServerResponse>()
  private unwatch: (() => void) | undefined
  private pending: NodeJS.Timeout | undefined
  private keepalive: NodeJS.Timeout | undefined

  constructor(private readonly engine: Engine) {}

  /** Starts the stream on `res` and keeps it until the browser goes. */
  open(res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    })
    res.write('retry: 1000\n\n')
    this.clients.add(res)
    res.on('close', () => {
      this.clients.delete(res)
      if (this.clients.size === 0) this.stop()
    })
    if (this.unwatch) return
    this.unwatch = this.engine.watch((event) => {
      if (event.kind === 'change') return this.changed()
      const { entry } = event
      this.send('attempt', {
        deliveryId: entry.deliveryId,
        webhookId: entry.webhookId,
        attempt: entry.attempt,
        result: entry.result,
        ok: entry.ok,
      })
    })
    this.keepalive = setInterval(() => this.write(': keepalive\n\n'), KEEPALIVE_MS)
    this.keepalive.unref()
  }

  /** Something changed: one `change` event for the burst. */
  changed(): void {
    if (this.pending || this.clients.size === 0) return
    this.pending = setTimeout(() => {
      this.pending = undefined
      this.send('change', { at: new Date(this.engine.clock.now()).toISOString() })
    }, COALESCE_MS)
    this.pending.unref()
  }

  /** Ends every stream. */
  close(): void {
    for (const res of this.clients) res.end()
    this.clients.clear()
    this.stop()
  }

  private send(event: string, data: unknown): void {
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }

  private write(text: string): void {
    for (const res of this.clients) res.write(text)
  }

  private stop(): void {
    this.unwatch?.()
    this.unwatch = undefined
    clearInterval(this.keepalive)
    clearTimeout(this.pending)
    this.pending = undefined
  }
}
