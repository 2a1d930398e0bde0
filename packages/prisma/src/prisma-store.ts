import { randomUUID } from 'node:crypto'
import {
  type BeginInput,
  type BeginResult,
  type Claim,
  type EventStore,
  type Logger,
  WebhookError,
} from '@affiliate-webhooks/core'
import {
  atMostEvery,
  checkAcquireTimeout,
  checkSqlIdentifier,
  closer,
  type DatabaseEventStore,
  gatedStreak,
  handlerLeftAborted,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  pruneRound,
  resolveStoreTimings,
  STORE_STATEMENT_TIMEOUT_MS,
  takeOpenClaim,
} from '@affiliate-webhooks/core/internal'
import type { ClaimVerdict, Dialect } from './dialect.js'
import { DIALECT_PACKAGES, loadDialect } from './dialect-loader.js'
import {
  isTransactionApiError,
  type PrismaClientLike,
  type PrismaRawQueries,
  type PrismaTransaction,
  providerOf,
  withDatabaseCode,
  within,
} from './prisma-client.js'
import { guardTransaction, type TxWatch } from './prisma-guard.js'

/** Options of {@link prismaStore}. */
export interface PrismaStoreOptions<P extends PrismaClientLike = PrismaClientLike>
  extends PooledStoreOptions {
  /**
   * A Prisma 7 client on a driver adapter: `new PrismaClient({ adapter: new PrismaPg(...) })`
   * (PostgreSQL) or `new PrismaMariaDb(...)` (MySQL, MariaDB). Each delivery runs in its
   * `$transaction(async (tx) => ...)`; the store disconnects it only in `store.close()`.
   */
  prisma: P
  /** Prefix of the store's tables and routines. Default `aw_`. */
  tablePrefix?: string | undefined
  /** PostgreSQL only: the schema holding them. Default: the connection's `search_path`. */
  schema?: string | undefined
}

/** The Prisma store: `ctx.tx` is the delivery's interactive-transaction client. */
export interface PrismaEventStore<Tx = PrismaRawQueries> extends DatabaseEventStore<Tx> {}

/** A claim's interactive transaction, held open while the handler runs. */
interface Open {
  /** Why it is over before the store's commit: its lease ran out. */
  ended: Error | undefined
  /** The handler left the transaction aborted (a statement failed and it went on). */
  aborted: boolean
  /** What ctx.tx saw: the transaction gone under the handler (a MySQL deadlock). */
  watch: TxWatch
  /** Tells the transaction's callback how to end. */
  decide: (how: 'commit' | 'rollback') => void
  /** `$transaction`'s promise: resolves once Prisma committed, rejects on a rollback or a lost session. */
  done: Promise<unknown>
  timer: ReturnType<typeof setTimeout> | undefined
  /** PostgreSQL: the transaction's id, by which its COMMIT's wait for the standbys is cancelled. */
  xact: string | undefined
}

/** Thrown in the transaction's callback to make Prisma roll back. */
class RollBack extends Error {}

/** The code of the error of a claim whose lease ran out. */
function leaseEnded(leaseMs: number): Error {
  return Object.assign(
    new Error(
      `prismaStore: the handler ran past the lease (${leaseMs} ms): its transaction was rolled back`,
    ),
    { code: 'lease_ended' },
  )
}

interface Announced {
  verdict: ClaimVerdict
  tx: unknown
}

interface Machine {
  prisma: PrismaClientLike
  dialect: Dialect
  /** The error thrown for an unreachable database (answered 503), said to the logger once a minute. */
  fail: (error: unknown) => Error
  leaseMs: number
  acquireTimeoutMs: number
}

/**
 * The delivery's `$transaction`: the claim, then (claimed) the wait for the
 * store's decision and the check before Prisma's COMMIT. Its `timeout` is the
 * claim's longest wait plus the lease; its `maxWait` the acquire deadline.
 */
function openTransaction(m: Machine, input: BeginInput, state: Open): Promise<Announced> {
  const leaseMs = input.leaseMs ?? m.leaseMs
  const decision = new Promise<'commit' | 'rollback'>((resolve) => {
    state.decide = resolve
  })
  return new Promise<Announced>((announce, reject) => {
    state.done = Promise.resolve(
      m.prisma.$transaction(
        async (tx: PrismaRawQueries) => {
          let verdict: ClaimVerdict
          try {
            // Bounded here: a database that stops answering gets a 503, not a wait for the lease.
            verdict = await within(m.dialect.claim(tx, input, leaseMs), m.dialect.claimWaitMs)
          } catch (error) {
            reject(error)
            throw error
          }
          announce({ verdict, tx })
          const sync = m.dialect.syncCommit
          if (
            sync !== undefined &&
            (verdict.status === 'duplicate' || verdict.status === 'stale')
          ) {
            // Its commit waits for the synchronous standbys, as a claim's does (committed()).
            state.xact = await sync.settle(tx, verdict.status)
            // The role may not make a duplicate's commit wait: nothing to commit.
            if (state.xact === undefined) throw new RollBack()
            return
          }
          // A stale event was marked done inside the transaction: commit it.
          if (verdict.status === 'stale') return
          if (verdict.status === 'claimed') state.xact = sync?.xactOf(verdict.held)
          if (verdict.status !== 'claimed' || (await decision) === 'rollback') {
            await within(m.dialect.beforeRollback(tx), STORE_STATEMENT_TIMEOUT_MS).catch(() => {})
            throw new RollBack()
          }
          try {
            await within(
              m.dialect.beforeCommit(tx, input, verdict.held),
              STORE_STATEMENT_TIMEOUT_MS,
            )
          } catch (error) {
            state.aborted = m.dialect.isAborted(error)
            throw error
          }
        },
        {
          ...m.dialect.transactionOptions(),
          maxWait: m.acquireTimeoutMs,
          timeout: m.dialect.claimWaitMs + leaseMs,
        },
      ),
    )
    state.done.catch(reject)
  })
}

/**
 * The lease ran out while the handler still runs: the transaction rolls back,
 * the retry may run. The entry leaves the map: a handler that never settles
 * leaves nothing behind, and a commit or release after this finds nothing to
 * do (not committed).
 */
function expire(open: Map<string, Open>, token: string, state: Open, leaseMs: number): void {
  if (open.get(token) === state) open.delete(token)
  if (state.ended !== undefined) return
  state.ended = leaseEnded(leaseMs)
  state.decide('rollback')
}

function beginStep(m: Machine, ready: () => Promise<void>, open: Map<string, Open>) {
  return async (input: BeginInput): Promise<BeginResult<unknown>> => {
    await ready()
    const state: Open = {
      ended: undefined,
      aborted: false,
      watch: { gone: undefined },
      decide: () => {},
      done: Promise.resolve(),
      timer: undefined,
      xact: undefined,
    }
    let announced: Announced
    try {
      announced = await openTransaction(m, input, state)
    } catch (error) {
      // No transaction within maxWait, or the database went away: answered 503.
      throw m.fail(withDatabaseCode(error))
    }
    state.done.catch(() => {})
    const { verdict } = announced
    if (verdict.status === 'claimed') {
      const leaseMs = input.leaseMs ?? m.leaseMs
      const token = randomUUID()
      state.timer = setTimeout(expire, leaseMs, open, token, state, leaseMs)
      state.timer.unref()
      open.set(token, state)
      const { eventId, conversionId, order } = input
      const tx = guardTransaction(
        announced.tx as object,
        m.dialect.sql,
        state.watch,
        m.dialect.goneReason,
      )
      return { status: 'claimed', claim: { eventId, conversionId, order, token, tx } }
    }
    // The stale mark commits; an in_progress's rollback is the expected end, and
    // a duplicate's where its commit cannot wait for the standbys (MySQL, or a
    // role that may not: openTransaction).
    const error =
      m.dialect.syncCommit !== undefined &&
      (verdict.status === 'duplicate' || verdict.status === 'stale')
        ? await committed(m, state)
        : await state.done.then(
            () => undefined,
            (failed: unknown) => failed,
          )
    if (error !== undefined && !(error instanceof RollBack)) throw m.fail(error)
    if (verdict.status === 'held') {
      throw m.dialect.held?.(input, verdict.event) ?? new WebhookError('event_held', verdict.event)
    }
    return { status: verdict.status }
  }
}

/**
 * The transaction's end, waited for at most the time of the store's last
 * statements and Prisma's COMMIT or ROLLBACK: a database that stops answering
 * never holds the answer (the server's own bounds end the session).
 */
const settled = (state: Open) =>
  within(state.done, 2 * STORE_STATEMENT_TIMEOUT_MS).then(
    () => undefined,
    (error: unknown) => error,
  )

const LATE = Symbol('late')

/** How `done` ended (its error, undefined when it resolved), or LATE past `ms`. */
function endedWithin(
  done: Promise<unknown>,
  ms: number,
): Promise<{ error: unknown } | typeof LATE> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(resolve, ms, LATE)
  })
  const ended = done.then(
    () => ({ error: undefined }),
    (error: unknown) => ({ error }),
  )
  return Promise.race([ended, late]).finally(() => clearTimeout(timer))
}

/**
 * The end of a transaction the store decided to commit: its error, undefined
 * once committed. On PostgreSQL Prisma's COMMIT waits for the synchronous
 * standbys, and the server ends that wait on no timeout: still waiting at the
 * store's bound, the wait is cancelled from another session (found by the
 * transaction's id, and only in that wait: a session that has moved on is
 * not touched), the COMMIT returns (committed on the primary only) and its
 * connection goes back to the pool, and the delivery is answered 503 (not
 * replicated), never 2xx, as pg's commitAndRelease does. Prisma hides the
 * COMMIT's WARNING, so any cancel that may have reached the wait makes it a
 * 503, and so does a COMMIT that answers not even the cancel. What is left:
 * a wait cancelled by someone else (pg_cancel_backend by hand) commits
 * unseen, and is answered 2xx as committed. The cancel runs on a session of
 * the dialect's own, outside the client's pool, which the waiting commits may
 * hold every connection of (postgres-dialect.ts outsidePool). MySQL: waited as
 * before (its commit bounds itself, mysql-semi-sync.ts).
 */
async function committed(m: Machine, state: Open): Promise<unknown> {
  const sync = m.dialect.syncCommit
  if (sync === undefined) return settled(state)
  const ended = await endedWithin(state.done, STORE_STATEMENT_TIMEOUT_MS)
  if (ended !== LATE) return ended.error
  // An unknown outcome counts as cancelled: a cancel that ran late could still end the wait.
  const cancelled =
    state.xact !== undefined &&
    (await within(sync.cancel(state.xact), sync.graceMs).catch(() => true))
  const after = await endedWithin(state.done, sync.graceMs)
  if (cancelled || after === LATE) throw m.fail(sync.notReplicated())
  return after.error
}

/** The handler's failure (500 handler_failed): it went on after its transaction was gone. */
function handlerEnded(why: string, cause: unknown): WebhookError {
  return new WebhookError('handler_failed', why, { cause })
}

const ENDED_UNSEEN =
  "prismaStore: the delivery's transaction was ended before the store's commit by a statement the handler ran on ctx.tx (one the store could not see), so nothing it wrote was kept. Let the store commit (return from the handler) or roll back (throw); use a savepoint for a part that may fail."

function commitStep(m: Machine, open: Map<string, Open>, afterCommit: () => void) {
  return async (claim: Claim<unknown>): Promise<boolean> => {
    const state = takeOpenClaim(open, claim)
    // Committed or released already: a second commit changes nothing.
    if (state === undefined) return false
    if (state.ended !== undefined) {
      await settled(state)
      return false
    }
    const { gone } = state.watch
    state.decide(gone === undefined ? 'commit' : 'rollback')
    // The check, then Prisma's COMMIT: a database that stops answering is a 503, not a hang.
    const error = gone === undefined ? await committed(m, state) : await settled(state)
    if (gone !== undefined) throw handlerEnded(gone.message, gone)
    if (error === undefined) {
      afterCommit()
      return true
    }
    if (state.aborted) throw handlerLeftAborted(error, '')
    if (m.dialect.isHandlerEnded(error)) {
      throw handlerEnded(m.dialect.endedMessage?.(error) ?? ENDED_UNSEEN, error)
    }
    // Past Prisma's timeout (the lease) the transaction was rolled back: not
    // committed, and the retry may run.
    if (isTransactionApiError(error) || m.dialect.isLeaseEnd(error)) return false
    throw m.fail(error)
  }
}

function releaseStep(open: Map<string, Open>) {
  return async (claim: Claim<unknown>): Promise<void> => {
    const state = takeOpenClaim(open, claim)
    if (state === undefined) return
    state.decide('rollback')
    await settled(state)
  }
}

/**
 * Errors of an unreachable database, named by the dialect (or a store package
 * not installed, named by the loader); logged once per outage (a minute).
 */
function failer(m: Machine, logger: Logger | undefined) {
  let reportedAt = Number.NEGATIVE_INFINITY
  return (error: unknown): Error => {
    const failure =
      (error instanceof Error && error.message.startsWith('prismaStore:')) ||
      m.dialect === undefined
        ? (error as Error)
        : m.dialect.failure(error)
    const at = Date.now()
    if (logger !== undefined && at - reportedAt >= PRUNE_EVERY_MS) {
      reportedAt = at
      logger.error(failure.message)
    }
    return failure
  }
}

/** The client's database, or the fix for a client this store cannot use. */
function checkPrisma(options: PrismaStoreOptions | undefined): PrismaClientLike {
  const prisma = (options as { prisma?: unknown } | undefined)?.prisma as
    | Partial<PrismaClientLike>
    | undefined
  if (
    prisma === undefined ||
    prisma === null ||
    typeof prisma.$transaction !== 'function' ||
    typeof prisma.$queryRawUnsafe !== 'function'
  ) {
    throw new TypeError(
      'prismaStore: `prisma` is required, a Prisma 7 client on a driver adapter: prismaStore({ prisma: new PrismaClient({ adapter: new PrismaPg({ connectionString }) }) })',
    )
  }
  return prisma as PrismaClientLike
}

/**
 * The dialect of the client's database, checked now and loaded on first use
 * (with its store package, an optional peer): a mistake in the options throws here.
 */
function dialectFor(options: PrismaStoreOptions, prisma: PrismaClientLike): () => Promise<Dialect> {
  const timings = resolveStoreTimings(options, 'prismaStore')
  const acquireTimeoutMs = checkAcquireTimeout('prismaStore', options.acquireTimeoutMs ?? 3000)
  const { tablePrefix, schema } = options
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  checkSqlIdentifier('prismaStore', 'tablePrefix', tablePrefix ?? 'aw_')
  const provider = providerOf(prisma)
  if (provider !== 'postgresql' && provider !== 'mysql') {
    throw new TypeError(
      `prismaStore: the Prisma client's provider is ${JSON.stringify(provider ?? 'unknown')}; this store runs on "postgresql" (with @prisma/adapter-pg and ${DIALECT_PACKAGES.postgresql.name}) and "mysql" (with @prisma/adapter-mariadb and ${DIALECT_PACKAGES.mysql.name})`,
    )
  }
  if (provider === 'postgresql' && schema !== undefined) {
    checkSqlIdentifier('prismaStore', 'schema', schema)
  }
  if (provider === 'mysql' && schema !== undefined) {
    throw new TypeError(
      "prismaStore: `schema` is for PostgreSQL; on MySQL the tables live in the connection's database (use tablePrefix)",
    )
  }
  return () =>
    loadDialect(provider, { prisma, tablePrefix, schema, timings, acquireTimeoutMs, logger })
}

/**
 * An {@link EventStore} whose handled mark commits in the handler's own Prisma
 * interactive transaction: each delivery runs in `prisma.$transaction(async
 * (tx) => ...)` and `ctx.tx` is that `tx`, so `await ctx.tx.ledger.create(...)`
 * and the mark commit together or not at all. The same tables, SQL and answers
 * as `@affiliate-webhooks/postgres` on PostgreSQL. The transaction's `maxWait`
 * is `acquireTimeoutMs` (past it: 503), its `timeout` the lease (plus the
 * claim's longest wait): a handler past it is rolled back and the retry runs.
 */
export function prismaStore<P extends PrismaClientLike>(
  options: PrismaStoreOptions<P>,
): PrismaEventStore<PrismaTransaction<P>> {
  const prisma = checkPrisma(options)
  const load = dialectFor(options, prisma)
  const timings = resolveStoreTimings(options, 'prismaStore')
  const acquireTimeoutMs = checkAcquireTimeout('prismaStore', options.acquireTimeoutMs ?? 3000)
  // The dialect is there once ready() resolved, and every step but commit and
  // release (which follow a begin) waits for ready() first.
  const machine = { prisma, leaseMs: timings.leaseMs, acquireTimeoutMs } as Machine
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  machine.fail = failer(machine, logger)
  let setup: Promise<void> | undefined
  let replicationChecked = false
  const ready = () => {
    setup ??= (async () => {
      machine.dialect ??= await load()
      await machine.dialect.ready()
      // Once per store: a failover that can lose acknowledged conversions.
      if (!replicationChecked && logger !== undefined) {
        replicationChecked = true
        const line = await machine.dialect.replicationWarning?.()
        if (line !== undefined) logger.warn(line)
      }
    })().catch((error: unknown) => {
      // Tried again on the next call: the database may come up later.
      setup = undefined
      throw machine.fail(error)
    })
    return setup
  }
  const open = new Map<string, Open>()
  const prune = async (limit = PRUNE_BATCH) => {
    await ready()
    return machine.dialect.prune(limit)
  }
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, () => pruneRound(prune))
  const store: PrismaEventStore<unknown> = {
    ready,
    begin: beginStep(machine, ready, open),
    commit: commitStep(machine, open, afterCommit),
    release: releaseStep(open),
    async peek(input) {
      await ready()
      return machine.dialect.peek(input)
    },
    recordAnswer: gatedStreak(async (code) => {
      await ready()
      return machine.dialect.record(code)
    }),
    prune,
    // The client's pool ends once the transactions in flight do; the store's
    // timers are unref'd and keep nothing alive.
    close: closer('prismaStore', logger, async () => {
      await machine.dialect?.close?.()
      await prisma.$disconnect?.()
    }),
  }
  return store as PrismaEventStore<PrismaTransaction<P>>
}
