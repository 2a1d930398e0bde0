import type { Engine } from '../../delivery/engine.js'
import { bodyObject } from '../../shared/fields.js'
import { parseAdvance, parseConversionInput } from '../validation.js'
import { EVENT_STREAM_PATH } from './endpoint-events.js'
import { iso, ok, path, type Route } from './route.js'

/** programId and channelId of a conversion emitted without them. */
export type ConversionDefaults = () => { programId: number | null; channelId: number | null }

function emitConversion(engine: Engine, conversionDefaults?: ConversionDefaults): Route {
  return {
    method: 'POST',
    pattern: path('/emulator/conversions'),
    access: 'key',
    control: true,
    body: true,
    handle({ body }) {
      const given = bodyObject(body)
      const earlier = typeof given.id === 'number' ? engine.conversion(given.id) : undefined
      const input = parseConversionInput(body, earlier)
      // A new conversion is earned on a program and channel that exist; a known one keeps its own.
      const defaults = earlier ? undefined : conversionDefaults?.()
      if (defaults && given.programId === undefined) input.programId = defaults.programId
      if (defaults && given.channelId === undefined) input.channelId = defaults.channelId
      const { event, deliveries } = engine.emitConversion(input)
      return ok(
        {
          event,
          deliveries: deliveries.map((delivery) => ({
            id: delivery.id,
            webhookId: delivery.webhookId,
          })),
        },
        event ? `${event.type} emitted.` : 'Status unchanged: no event.',
      )
    },
  }
}

/**
 * The emulator's own control routes of the delivery side, outside `/v1`:
 * `POST /emulator/conversions`, `POST` and `GET /emulator/clock`, `GET /emulator/log`
 * (`?deliveryId=` for one delivery's attempts)
 * (and, from `endpoint-events.ts`, `GET /emulator/webhooks/{id}/events`).
 */
export function createEmulatorControlRoutes(
  engine: Engine,
  conversionDefaults?: ConversionDefaults,
): Route[] {
  return [
    emitConversion(engine, conversionDefaults),
    {
      method: 'POST',
      pattern: path('/emulator/clock'),
      access: 'key',
      control: true,
      body: true,
      async handle({ body }) {
        const { attempts, now } = await engine.advance(parseAdvance(body))
        return ok({ now: new Date(now).toISOString(), attempts }, 'Clock advanced.')
      },
    },
    {
      // Public: a client learns the pace of the emulator's batches, and where each
      // endpoint's event stream is, before polling it; the same probe against the
      // real service is a 404 that counts nothing.
      method: 'GET',
      pattern: path('/emulator/clock'),
      access: 'public',
      control: true,
      handle: () =>
        ok({
          now: new Date(engine.clock.now()).toISOString(),
          timeScale: engine.clock.timeScale,
          batchIntervalMs: engine.rules.batchIntervalMs,
          eventStream: EVENT_STREAM_PATH,
        }),
    },
    {
      method: 'GET',
      pattern: path('/emulator/log'),
      access: 'key',
      control: true,
      // `?deliveryId=` keeps one delivery's attempts: what `trigger --wait` follows.
      handle: ({ query }) => {
        const deliveryId = query.get('deliveryId')
        const entries = deliveryId
          ? engine.log().filter((entry) => entry.deliveryId === deliveryId)
          : engine.log()
        return ok(
          entries.map((entry) => ({
            ...entry,
            at: iso(entry.at),
            // A state file from before batches has neither: the attempt's own time.
            dueAt: iso(entry.dueAt ?? entry.at),
            batchAt: iso(entry.batchAt ?? entry.at),
            ...(entry.nextAttemptAt === undefined
              ? {}
              : { nextAttemptAt: iso(entry.nextAttemptAt) }),
          })),
        )
      },
    },
  ]
}
