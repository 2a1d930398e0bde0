import type { ConversionEvent } from '@affiliate-webhooks/core'
import {
  ANSWER_TIMEOUT_MS,
  BATCH_INTERVAL_MS,
  DISABLE_AFTER_FAILURES,
} from '../delivery/schedule.js'
import { DEFAULT_REJECT_RATE, type PlannedEvent, planLifecycles } from './lifecycles.js'
import { randomSeed, seededRandom } from './random.js'
import { randomConversionId } from './sample-event.js'
import {
  createSimulation,
  DEFAULT_CONCURRENCY,
  type SimulatedDelivery,
  type Simulation,
  type SimulationEngineOptions,
  type SimulatorStats,
} from './simulation-driver.js'

/** A run of conversion lifecycles: the engine's options plus the stream's shape. */
export interface SimulationOptions extends Omit<SimulationEngineOptions, 'onEndpointChange'> {
  /** Conversion lifecycles to run. */
  conversions: number
  /** Share of events delivered again after they succeeded (a replay). 0 to 1, default 0. */
  duplicates?: number
  /** Share of events held back until after the next event of their conversion went out. 0 to 1, default 0. */
  reorder?: number
  /** Share of conversions rejected on the way. Default 0.2. */
  rejectRate?: number
  /** Seed of every random choice, so a run can be repeated. Default random. */
  seed?: number
  /**
   * Conversions start spread over this many ms of service time. Default half a
   * minute per conversion, at least ten minutes.
   */
  windowMs?: number
  /** Id of the first conversion. Default random, so runs do not collide in a persistent store. */
  firstConversionId?: number
  /** Called every `progressIntervalMs` of real time while the run lasts, and once at the end. */
  onProgress?: (progress: SimulationProgress) => void
  /** Default 100. */
  progressIntervalMs?: number
  /** Stops the run early; the report then has `aborted: true`. */
  signal?: AbortSignal
}

/** What `onProgress` gets while a run lasts: the simulator's counters and the planned total. */
export interface SimulationProgress extends SimulatorStats {
  /** Events the run will emit in all. */
  plannedEvents: number
}

/** The last event of a conversion: the status a receiver must end with. */
export interface ExpectedConversion {
  /** The conversion's id. */
  conversionId: number
  /** Status of its newest event. */
  status: string
  /** Id of its newest event. */
  eventId: string
  /** createdAt of its newest event. */
  createdAt: string
}

/** Everything a finished (or stopped) run did, for a summary, a test or a script. */
export interface SimulationReport {
  /** The URL, or `(several)` when a function picked one per attempt. */
  url: string
  /** What the run was asked to do, the seed included, so it can be repeated. */
  settings: {
    conversions: number
    duplicates: number
    reorder: number
    concurrency: number
    timeScale: number
    timeoutMs: number
    disableAfterFailures: number
    seed: number
  }
  /** The simulator's counters at the end. */
  stats: SimulatorStats
  /** Events held back to arrive after a newer one of their conversion. */
  heldBack: number
  /** Every event, in the order they occurred. */
  events: ConversionEvent[]
  /** Per conversion, the newest event: the status a receiver must end with. */
  expected: ExpectedConversion[]
  /** Every delivery with its attempts. */
  deliveries: readonly SimulatedDelivery[]
  /** The deliveries that ended failed. */
  failed: readonly SimulatedDelivery[]
  /** Every delivery succeeded, every event was queued and the endpoint stayed active. */
  ok: boolean
  /** Stopped by the signal before every delivery ended. */
  aborted: boolean
}

function checkOptions(options: SimulationOptions): void {
  const { conversions, duplicates = 0, reorder = 0, rejectRate = DEFAULT_REJECT_RATE } = options
  if (!Number.isSafeInteger(conversions) || conversions < 0) {
    throw new TypeError('runSimulation: `conversions` must be a whole number >= 0')
  }
  for (const [name, rate] of [
    ['duplicates', duplicates],
    ['reorder', reorder],
    ['rejectRate', rejectRate],
  ] as const) {
    if (!(rate >= 0 && rate <= 1)) throw new TypeError(`runSimulation: \`${name}\` must be 0 to 1`)
  }
}

/** Defaults of a run's options. */
export const SIMULATION_DEFAULTS = {
  concurrency: DEFAULT_CONCURRENCY,
  rejectRate: DEFAULT_REJECT_RATE,
} as const

interface StreamEvent {
  planned: PlannedEvent
  /** Held back: its first attempt not before this service time. */
  notBefore: number | undefined
}

/**
 * The events of the plans in the order they occur; some held back to go out at
 * least one batch after the next event of their conversion, some marked to be
 * replayed once they succeeded.
 */
function planStream(
  plans: PlannedEvent[][],
  random: () => number,
  rates: { reorder: number; duplicates: number },
  batchInterval: number,
) {
  let heldBack = 0
  const replayAfterSuccess = new Set<string>()
  const stream: StreamEvent[] = []
  for (const plan of plans) {
    // Newest first, so a held event is released after its successor's own release.
    const released: (number | undefined)[] = []
    for (let step = plan.length - 1; step >= 0; step--) {
      const planned = plan[step] as PlannedEvent
      const next = plan[step + 1]
      let notBefore: number | undefined
      if (next !== undefined && random() < rates.reorder) {
        notBefore = (released[step + 1] ?? next.at) + batchInterval * (1 + random())
        heldBack++
      }
      released[step] = notBefore
      if (random() < rates.duplicates) replayAfterSuccess.add(planned.event.id)
      stream.push({ planned, notBefore })
    }
  }
  stream.sort((a, b) => a.planned.at - b.planned.at)
  return { stream, heldBack, replayAfterSuccess }
}

/** Resolves when the simulation is idle, or when `signal` aborts (then true). */
async function untilIdleOrAborted(simulation: Simulation, signal?: AbortSignal): Promise<boolean> {
  let aborted = false
  const stopped = new Promise<void>((resolve) => {
    if (!signal) return
    const stop = () => {
      aborted = true
      resolve()
    }
    if (signal.aborted) stop()
    else signal.addEventListener('abort', stop, { once: true })
  })
  await Promise.race([simulation.idle(), stopped])
  return aborted
}

/** Per conversion, its newest event: the status a receiver must end with. */
const expectedOf = (plans: PlannedEvent[][]): ExpectedConversion[] =>
  plans
    .map((plan) => plan.at(-1)?.event)
    .filter((event): event is ConversionEvent => event !== undefined)
    .map((event) => ({
      conversionId: event.data.conversion.id,
      status: event.data.conversion.status,
      eventId: event.id,
      createdAt: event.createdAt,
    }))

/** What a finished (or aborted) run reports: settings, stats, every event and delivery, the verdict. */
function simulationReport(run: {
  options: SimulationOptions
  simulation: Simulation
  seed: number
  stream: StreamEvent[]
  heldBack: number
  plans: PlannedEvent[][]
  aborted: boolean
}): SimulationReport {
  const { options, simulation, seed, stream, heldBack, plans, aborted } = run
  const stats = simulation.stats()
  const deliveries = simulation.deliveries()
  const failed = deliveries.filter((d) => d.status === 'failed')
  return {
    url: typeof options.url === 'string' ? options.url : '(several)',
    settings: {
      conversions: options.conversions,
      duplicates: options.duplicates ?? 0,
      reorder: options.reorder ?? 0,
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      timeScale: simulation.timeScale,
      timeoutMs: options.timeoutMs ?? ANSWER_TIMEOUT_MS,
      disableAfterFailures: options.disableAfterFailures ?? DISABLE_AFTER_FAILURES,
      seed,
    },
    stats,
    heldBack,
    events: stream.map(({ planned }) => planned.event),
    expected: expectedOf(plans),
    deliveries,
    failed,
    ok:
      !aborted &&
      failed.length === 0 &&
      stats.notQueued === 0 &&
      stats.deliveries.succeeded === stats.deliveries.total &&
      stats.endpoint.status === 'active',
    aborted,
  }
}

/**
 * Runs a stream of conversion lifecycles through the engine ({@link createSimulation}):
 * events occur over time, some are held back (reordered), some are replayed after
 * they succeeded (duplicates); resolves when every delivery has ended.
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  checkOptions(options)
  const {
    conversions,
    duplicates = 0,
    reorder = 0,
    rejectRate,
    onProgress,
    progressIntervalMs = 100,
    signal,
    seed: _seed,
    windowMs: _window,
    firstConversionId: _first,
    ...engineOptions
  } = options
  const seed = options.seed ?? randomSeed()
  const random = seededRandom(seed)
  const batchInterval = options.batchIntervalMs ?? BATCH_INTERVAL_MS
  const replayed = new Set<string>()
  const simulation = createSimulation({
    ...engineOptions,
    onAttempt(attempt, delivery) {
      options.onAttempt?.(attempt, delivery)
      // A duplicate: the service sends an event again after the receiver acknowledged it.
      if (attempt.ok && replayed.delete(delivery.eventId)) {
        simulation.replay(delivery.id, {
          notBefore: simulation.now() + random() * 3 * batchInterval,
        })
      }
    },
  })
  const startAt = simulation.now()
  const realStart = Date.now()
  const plans = planLifecycles({
    conversions,
    random,
    startAt,
    // The real time each event occurs at, as its clock runs timeScale times faster.
    stamp: (at) => realStart + (at - startAt) / simulation.timeScale,
    windowMs: options.windowMs ?? Math.max(10 * 60_000, conversions * 30_000),
    ...(rejectRate === undefined ? {} : { rejectRate }),
    firstConversionId: options.firstConversionId ?? randomConversionId(),
    minStepGapMs: batchInterval,
  })
  const { stream, heldBack, replayAfterSuccess } = planStream(
    plans,
    random,
    { reorder, duplicates },
    batchInterval,
  )
  for (const id of replayAfterSuccess) replayed.add(id)
  for (const { planned, notBefore } of stream) {
    simulation.emit(planned.event, {
      at: planned.at,
      ...(notBefore === undefined ? {} : { notBefore }),
    })
  }
  const progress = (): SimulationProgress => ({
    ...simulation.stats(),
    plannedEvents: stream.length,
  })
  const ticker = onProgress
    ? setInterval(() => onProgress(progress()), progressIntervalMs).unref()
    : undefined
  let aborted = false
  try {
    aborted = await untilIdleOrAborted(simulation, signal)
  } finally {
    if (ticker) clearInterval(ticker)
    await simulation.close()
  }
  onProgress?.(progress())

  return simulationReport({ options, simulation, seed, stream, heldBack, plans, aborted })
}
