import {
  type Claim,
  type Conversion,
  type ConversionCreatedEvent,
  type ConversionEvent,
  type ConversionUpdatedEvent,
  EVENT_TYPES,
  type EventStore,
  type HandlerContext,
  type Logger,
  type QueuedDelivery,
  type ReceiverOptions,
  type UnknownWebhookEvent,
  type WebhookTestEvent,
} from '@affiliate-webhooks/core'
import {
  type AnyHandler,
  handlerTable,
  readQueuedJob,
  resolveLogger,
} from '@affiliate-webhooks/core/internal'
import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from 'bullmq'
import {
  clientFor,
  DEFAULT_PREFIX,
  jobIdFor,
  pendingKey,
  type QueueConnection,
} from './connection.js'

/** What a worker's handler sees beside the event: the delivery facts and the job's. */
export interface WorkerContext<Tx = undefined> extends HandlerContext<Tx> {
  /** The BullMQ job id (the event id). */
  jobId: string
  /** Tries of this job so far, before this one (BullMQ's `attemptsMade`). */
  attemptsMade: number
}

type WorkerHandler<E, Tx> = (event: E, ctx: WorkerContext<Tx>) => unknown

/** What a worker's job ended as; the job's return value in BullMQ. */
export type WorkerOutcome = 'processed' | 'duplicate' | 'stale' | 'ignored' | 'superseded'

/**
 * Options of {@link createWorker}. `Tx` is inferred from `store`: with a store
 * that shares the handler's database, handlers get its transaction as `ctx.tx`.
 */
export interface CreateWorkerOptions<Tx = undefined> {
  /** Redis for the queue: an ioredis client, or options for one. */
  connection: QueueConnection
  /** The queue the receivers' `bullmqHandoff` adds to. */
  queueName: string
  /** The dedupe and ordering store, shared by every worker (and ideally the receivers). */
  store: EventStore<Tx>
  /** Jobs run at once by this worker; events of one conversion never overlap. Default 8. */
  concurrency?: number | undefined
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string | undefined
  /** Called for conversion.created and conversion.updated unless `on` has that type. */
  onConversion?:
    | ((conversion: Conversion, event: ConversionEvent, ctx: WorkerContext<Tx>) => unknown)
    | undefined
  /** One handler per event type; wins over `onConversion` for its type. */
  on?:
    | {
        'conversion.created'?: WorkerHandler<ConversionCreatedEvent, Tx> | undefined
        'conversion.updated'?: WorkerHandler<ConversionUpdatedEvent, Tx> | undefined
        'webhook.test'?: WorkerHandler<WebhookTestEvent, Tx> | undefined
      }
    | undefined
  /** Called for event types this version does not know; without it they are `ignored`. */
  onUnknownEvent?: WorkerHandler<UnknownWebhookEvent, Tx> | undefined
  /**
   * The longest one handler run may hold its event, ms: longer than your slowest
   * handler. The store lease itself is short and follows the worker's life: it is
   * `lockDuration` long and renewed every third of that while the handler runs (as
   * BullMQ renews its job lock; a renewal that fails is tried again within a
   * second), up to `leaseMs` in all. A worker that dies loses
   * its events' leases within `lockDuration`, so their jobs run again as soon as
   * BullMQ finds them stalled: within {@link recoveryBoundMs} (about 60 s with the
   * defaults). With a store that cannot renew (no `extend`), the lease is
   * `leaseMs` from the start, and a dead worker's jobs wait that long. Default 5 minutes.
   */
  leaseMs?: number | undefined
  /** How long a job steps aside (without using a try) for an older or running event of its conversion, ms. Default 200. */
  deferMs?: number | undefined
  /** BullMQ's job lock, ms; a dead worker's job is picked up again after about this. Default 30 s. */
  lockDuration?: number | undefined
  /** BullMQ's check for stalled jobs, ms. Default 30 s. */
  stalledInterval?: number | undefined
  /** How often one job may stall (its worker died) before it fails. Default 5. */
  maxStalledCount?: number | undefined
  /** Start taking jobs at once. Default true; else call `worker.run()`. */
  autorun?: boolean | undefined
  /**
   * Where the worker warns when a running handler lost its store lease (the store
   * was unreachable for longer than `lockDuration`): `console` by default, pino,
   * or `false` for none.
   */
  logger?: Logger | false | undefined
}

/** A running worker: BullMQ's `Worker`, and `close()` for everything it opened. */
export interface AffiliateWorker {
  readonly worker: Worker<unknown, WorkerOutcome>
  /** Waits for running jobs to end (BullMQ's graceful close), then closes connections. */
  close(): Promise<void>
}

const WAITING = new Set(['waiting', 'delayed', 'prioritized', 'active', 'waiting-children'])

/** BullMQ's defaults, which the worker keeps unless told otherwise. */
const LOCK_DURATION_MS = 30_000
const STALLED_INTERVAL_MS = 30_000

/**
 * The longest a job whose worker died waits before it runs again, ms, by
 * construction: BullMQ's lock of the job runs out within `lockDuration` of the
 * death, and its stalled check (every `stalledInterval`, moving jobs found
 * stalled at two checks in a row) hands the job back within `stalledInterval`
 * after that, or two intervals if the lock was gone at the first check. By then
 * the store lease, `lockDuration` long and no longer renewed, has run out too; a
 * job that still meets it steps aside for `deferMs` to `2 x deferMs`. Assumes a
 * live worker takes the job at once, and a store with `extend`.
 */
export function recoveryBoundMs(
  options: Pick<CreateWorkerOptions, 'lockDuration' | 'stalledInterval' | 'deferMs'> = {},
): number {
  const lock = options.lockDuration ?? LOCK_DURATION_MS
  const stalled = options.stalledInterval ?? STALLED_INTERVAL_MS
  return Math.max(lock + stalled, 2 * stalled) + 2 * (options.deferMs ?? 200)
}

/**
 * Renews a claim's store lease while its handler runs: every third of the lease,
 * each time by `shortMs`, until `capMs` after the start. A renewal that fails (a
 * Redis blip) is tried again soon, not at the next tick, so one failure does not
 * let the lease run out. A lease found lost stops the renewals and calls `onLost`
 * once (the commit then says the run was superseded). Returns the function that
 * stops it.
 */
function keepLease(
  store: EventStore<unknown>,
  claim: Claim<unknown>,
  [shortMs, capMs]: [number, number],
  onLost: () => void,
): () => void {
  const extend = store.extend?.bind(store)
  if (extend === undefined || shortMs >= capMs) return () => {}
  const until = Date.now() + capMs
  const everyMs = Math.max(1, Math.floor(shortMs / 3))
  const retryMs = Math.max(1, Math.min(1000, Math.floor(shortMs / 6)))
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const next = (ms: number) => {
    if (stopped) return
    timer = setTimeout(renew, ms)
    timer.unref?.()
  }
  const renew = () => {
    const left = until - Date.now()
    if (stopped || left <= 0) return
    Promise.resolve()
      .then(() => extend(claim, Math.min(shortMs, left)))
      .then(
        (held) => {
          if (held) next(everyMs)
          else if (!stopped) onLost()
        },
        () => next(retryMs),
      )
  }
  next(everyMs)
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}

/**
 * {@link keepLease} for each claim of one worker. A lost lease is said once,
 * through the worker's logger: the handler runs on without the event's lease or
 * its conversion's lock, so another run may overlap it.
 */
function leaseKeeper(
  store: EventStore<unknown>,
  timing: [number, number],
  lockDuration: number,
  given: Logger | false | undefined,
): (claim: Claim<unknown>) => () => void {
  const logger = resolveLogger(given, 'createWorker')
  return (claim) =>
    keepLease(store, claim, timing, () => {
      logger?.warn(
        `affiliate-webhooks: worker lost the store lease of event ${claim.eventId} while its handler ran (the store was unreachable for longer than lockDuration, ${lockDuration} ms?); another run of it, or of its conversion, may overlap this one.`,
      )
    })
}

/**
 * The ordering index of the queue: per conversion, the events queued and not
 * yet settled, so an event waits while an older one of its conversion is ahead.
 */
function conversionQueue(
  client: ReturnType<typeof clientFor>['client'],
  queue: Queue,
  prefix: string,
  queueName: string,
) {
  /** An older event of this conversion still queued or running: it goes first. */
  async function olderWaiting(delivery: QueuedDelivery): Promise<boolean> {
    const key = pendingKey(prefix, queueName, delivery.conversionId as number)
    const older = await client.zrangebyscore(key, '-inf', `(${delivery.order}`)
    for (const eventId of older) {
      const state = await queue.getJobState(jobIdFor(eventId))
      if (WAITING.has(state)) return true
      // Settled, failed for good, or never added: it holds nothing back.
      await client.zrem(key, eventId)
    }
    return false
  }

  const settled = async (delivery: QueuedDelivery) => {
    if (delivery.conversionId === undefined) return
    await client.zrem(pendingKey(prefix, queueName, delivery.conversionId), delivery.event.id)
  }
  return { olderWaiting, settled }
}

/**
 * Runs the handler under a claim whose lease is being renewed (`stopRenewing`
 * ends that), then commits it, or releases it when the handler throws; resolves
 * to whether the commit counted.
 */
async function runClaimed(
  store: EventStore<unknown>,
  claim: Claim<unknown>,
  handle: () => unknown,
  stopRenewing: () => void,
): Promise<boolean> {
  try {
    await handle()
  } catch (error) {
    stopRenewing()
    // The try's failure is what BullMQ records; a failed release only means the
    // next try waits for the lease to run out.
    await Promise.resolve(store.release(claim)).catch(() => {})
    throw error
  }
  stopRenewing()
  const committed = await store.commit(claim)
  // A transaction that did not commit took the handler's writes with it: this
  // try failed, and BullMQ runs the job again.
  if (!committed && claim.tx !== undefined) {
    throw new Error(
      `event ${claim.eventId}: the store's transaction ended before its commit (lease ran out or connection lost); its writes were rolled back`,
    )
  }
  return committed
}

/** The worker's options checked: a queue name, a store and at least one handler. */
function checkedHandlers(options: CreateWorkerOptions<unknown>) {
  const { queueName, store } = options
  if (typeof queueName !== 'string' || queueName === '' || queueName.includes(':')) {
    throw new TypeError('createWorker: `queueName` must be a non-empty string without `:`')
  }
  if (store === undefined) throw new TypeError('createWorker: `store` is required')
  const handlers = handlerTable(options as unknown as ReceiverOptions<unknown>)
  const onUnknown = options.onUnknownEvent as AnyHandler | undefined
  if (handlers.size === 0 && onUnknown === undefined) {
    throw new TypeError(
      'createWorker: no handler given; pass onConversion, on: { ... } or onUnknownEvent.',
    )
  }
  return { handlers, onUnknown }
}

/**
 * The store's verdict and the ordering index, read at once (one round trip of
 * wait, not two). The lease is renewed from the moment it exists (`renew` starts
 * that and returns its stop); a claim taken while the ordering look-up failed
 * goes back at once, or the conversion would stay locked for the whole lease.
 */
async function beginInOrder(
  store: EventStore<unknown>,
  delivery: QueuedDelivery,
  leaseMs: number,
  olderWaiting: (delivery: QueuedDelivery) => Promise<boolean>,
  renew: (claim: Claim<unknown>) => () => void,
) {
  const { event, conversionId, order } = delivery
  let stopRenewing = () => {}
  const [beginning, looking] = await Promise.allSettled([
    Promise.resolve(
      store.begin({ eventId: event.id, conversionId, order, createdAt: order, leaseMs }),
    ).then((begun) => {
      if (begun.status === 'claimed') stopRenewing = renew(begun.claim)
      return begun
    }),
    conversionId === undefined ? false : olderWaiting(delivery),
  ])
  if (beginning.status === 'rejected') throw beginning.reason
  const begun = beginning.value
  if (looking.status === 'rejected') {
    stopRenewing()
    if (begun.status === 'claimed') await store.release(begun.claim)
    throw looking.reason
  }
  return { begun, older: looking.value, stopRenewing }
}

/** What a job's run needs: the store and its timing, the handlers, the ordering index. */
interface JobRun {
  store: EventStore<unknown>
  handlers: ReturnType<typeof checkedHandlers>['handlers']
  onUnknown: AnyHandler | undefined
  /** The store lease of one run (see {@link createWorker}). */
  firstLeaseMs: number
  deferMs: number
  renew: (claim: Claim<unknown>) => () => void
  olderWaiting: (delivery: QueuedDelivery) => Promise<boolean>
  settled: (delivery: QueuedDelivery) => Promise<void>
}

/** The job's delivery; a job written by something other than a receiver fails for good. */
function deliveryOf(job: Job): QueuedDelivery {
  try {
    return readQueuedJob(job.data)
  } catch (error) {
    // No try would make it valid.
    throw new UnrecoverableError(
      `job ${job.id} is not a verified webhook event: ${(error as Error).message}`,
    )
  }
}

/** Stepping aside is not a failure: the job goes back to delayed and keeps its tries. */
async function defer(job: Job, token: string | undefined, deferMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + deferMs + Math.floor(Math.random() * deferMs), token)
  throw new DelayedError()
}

/**
 * One job under the store's rules: begin (stepping aside while the event runs
 * elsewhere or an older one of its conversion waits), the handler, commit or release.
 */
function jobProcessor(run: JobRun) {
  const { store, handlers, onUnknown, settled } = run
  const known = new Set<string>(EVENT_TYPES)
  return async function processJob(job: Job, token?: string): Promise<WorkerOutcome> {
    const delivery = deliveryOf(job)
    const { event, attempt, signedAt } = delivery
    const handler = handlers.get(event.type) ?? (known.has(event.type) ? undefined : onUnknown)
    if (handler === undefined) {
      await settled(delivery)
      return 'ignored'
    }
    const { begun, older, stopRenewing } = await beginInOrder(
      store,
      delivery,
      run.firstLeaseMs,
      run.olderWaiting,
      run.renew,
    )
    if (begun.status === 'in_progress') return defer(job, token, run.deferMs)
    if (begun.status === 'claimed' && older) {
      stopRenewing()
      await store.release(begun.claim)
      return defer(job, token, run.deferMs)
    }
    if (begun.status !== 'claimed') {
      await settled(delivery)
      return begun.status
    }
    const ctx: WorkerContext<unknown> = {
      eventId: event.id,
      attempt,
      signedAt,
      tx: begun.claim.tx,
      jobId: job.id ?? event.id,
      attemptsMade: job.attemptsMade,
    }
    const committed = await runClaimed(store, begun.claim, () => handler(event, ctx), stopRenewing)
    // After the commit: a newer event that finds this entry gone may begin, and the
    // commit has raised the watermark and dropped the lock by then.
    await settled(delivery)
    // Not committed: the lease ran out and another run of this event committed first.
    return committed ? 'processed' : 'superseded'
  }
}

/**
 * The worker side: takes the jobs `bullmqHandoff` added and runs the typed
 * handlers under the store's rules, exactly as the inline receiver does (begin,
 * handler, commit or release): each event handled once, stale ones dropped, two
 * events of one conversion never at once, the older first when both wait.
 */
export function createWorker<Tx = undefined>(
  typedOptions: CreateWorkerOptions<Tx>,
): AffiliateWorker {
  const options = typedOptions as CreateWorkerOptions<unknown>
  const { queueName, store } = options
  const { handlers, onUnknown } = checkedHandlers(options)
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const leaseMs = options.leaseMs ?? 5 * 60_000
  const lockDuration = options.lockDuration ?? LOCK_DURATION_MS
  // The store lease of one run: as short as BullMQ's job lock when it can be
  // renewed, else the whole of leaseMs.
  const firstLeaseMs =
    typeof store.extend === 'function' ? Math.max(1, Math.min(lockDuration, leaseMs)) : leaseMs
  const { client, owned } = clientFor(options.connection, 'worker')
  // For job states only; it never adds.
  const queue = new Queue(queueName, { connection: client, prefix })
  queue.on('error', () => {})
  const processJob = jobProcessor({
    store,
    handlers,
    onUnknown,
    firstLeaseMs,
    deferMs: options.deferMs ?? 200,
    renew: leaseKeeper(store, [firstLeaseMs, leaseMs], lockDuration, options.logger),
    ...conversionQueue(client, queue, prefix, queueName),
  })

  const worker = new Worker<unknown, WorkerOutcome>(queueName, processJob, {
    connection: client,
    prefix,
    concurrency: options.concurrency ?? 8,
    autorun: options.autorun ?? true,
    lockDuration,
    stalledInterval: options.stalledInterval ?? STALLED_INTERVAL_MS,
    maxStalledCount: options.maxStalledCount ?? 5,
  })
  worker.on('error', () => {})

  return {
    worker,
    async close() {
      await worker.close()
      await queue.close()
      if (owned) client.disconnect()
    },
  }
}
