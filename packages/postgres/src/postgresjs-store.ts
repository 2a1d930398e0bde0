import { randomUUID } from 'node:crypto'
import type {
  BeginInput,
  BeginResult,
  Claim,
  PeekInput,
  PeekResult,
} from '@affiliate-webhooks/core'
import {
  atMostEvery,
  checkAcquireTimeout,
  type DatabaseEventStore,
  gatedStreak,
  handlerLeftAborted,
  NO_STREAK,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  pruneRound,
  resolveStoreTimings,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_CODES_KEPT,
  takeOpenClaim,
} from '@affiliate-webhooks/core/internal'
import type { Sql, TransactionSql } from 'postgres'
import { isAborted, isLeaseEnd, isLockNotAvailable, leaseEnded, unreachable } from './errors.js'
import { type PostgresSchemaOptions, type SchemaNames, schemaNames } from './schema.js'
import { ensureSchema, type RunSql, type SetupDriver } from './setup.js'
import {
  claimCallSql,
  heldLiteralSql,
  type PeekRow,
  peekSql,
  peekVerdict,
  pruneSql,
  SERVER_IDLE_MARGIN_MS,
  streakResetSql,
  streakSql,
  TRANSACTION_ID,
} from './statements.js'

/** A postgres.js instance, whatever its custom types. */
// biome-ignore lint/suspicious/noExplicitAny: postgres.js types are generic in the app's custom types.
export type PostgresJsSql = Sql<any>
/** The transaction's own `sql` inside `sql.begin(...)`: a tagged template. */
// biome-ignore lint/suspicious/noExplicitAny: as above.
export type PostgresJsTransaction = TransactionSql<any>

/** Options of `postgresStore` with a postgres.js instance. */
export interface PostgresJsStoreOptions extends PooledStoreOptions, PostgresSchemaOptions {
  /**
   * A postgres.js instance (`postgres(url)`), with `max` at least 2. Each delivery
   * runs in `sql.begin(...)`; the store never ends it.
   */
  sql: PostgresJsSql
}

/** The Postgres store on postgres.js: `ctx.tx` is the delivery's transaction `sql` (a tagged template). */
export interface PostgresJsEventStore extends DatabaseEventStore<PostgresJsTransaction> {}

/** A claim's transaction on postgres.js. */
interface OpenJs {
  xact: string
  /** Why the transaction is over before the store's commit: its lease ran out. */
  ended: Error | undefined
  /** Settled by commit or release: ctx.tx refuses every query after it. */
  closed: boolean
  /** The handler left the transaction aborted (a statement failed and it went on). */
  aborted: boolean
  /** Tells the transaction's callback how to end. */
  decide: (how: 'commit' | 'rollback') => void
  /** sql.begin's promise: resolves once COMMIT ran, rejects on a rollback or a lost session. */
  done: Promise<unknown>
  /** The held check sent with the COMMIT: undefined when it passed, else its error (nothing committed). */
  held: Promise<unknown>
  timer: ReturnType<typeof setTimeout> | undefined
}

/** Thrown in the transaction's callback to make postgres.js roll back. */
class RollBack extends Error {}

/** `promise`, or a rejection after `ms`: postgres.js has no per-query timeout. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** `PostgreSQL at host:port/database as user`, from the instance's parsed options: never the password. */
function describeSql(sql: PostgresJsSql): string {
  const o = sql.options
  const hosts = o.host.map((host, i) => `${host}:${o.port[i] ?? o.port[0]}`).join(',')
  return `PostgreSQL at ${hosts}/${o.database} as user ${o.user}`
}

function failure(sql: PostgresJsSql, cause: unknown): Error {
  return unreachable(
    `postgresStore: cannot use ${describeSql(sql)}`,
    "Check the postgres.js instance's connection settings (url, or host, port, database, username).",
    cause,
  )
}

function setupDriver(sql: PostgresJsSql): SetupDriver {
  const runOn =
    (on: PostgresJsSql | PostgresJsTransaction): RunSql =>
    async <Row>(text: string, params: unknown[] = []) =>
      (await within(
        on.unsafe(text, params as never[]) as unknown as Promise<Row[]>,
        STORE_STATEMENT_TIMEOUT_MS,
      )) as Row[]
  return {
    run: runOn(sql),
    transaction: async (work) => {
      await sql.begin((tx) => work(runOn(tx)))
    },
    failure: (cause) => failure(sql, cause),
  }
}

/**
 * ctx.tx: the transaction's `sql` itself while the claim holds (with the
 * instance's `options`, which a transaction's `sql` lacks), and an error for
 * any query once it is over (lease, commit, release). postgres.js hands a
 * finished transaction's queries to the connection, whoever holds it by then:
 * without this a late query could join another delivery's transaction.
 */
function guarded(
  tx: PostgresJsTransaction,
  state: OpenJs,
  options: PostgresJsSql['options'],
): PostgresJsTransaction {
  const check = () => {
    if (state.closed || state.ended !== undefined) {
      throw new Error(
        "postgresStore: this delivery's transaction is over (committed, rolled back, or past its lease): ctx.tx takes no more queries",
      )
    }
  }
  return new Proxy(tx, {
    apply(target, self, args) {
      check()
      return Reflect.apply(target, self, args)
    },
    get(target, key) {
      // The instance's options (its parsers and serializers), which the transaction's
      // queries use: what a query builder reads from a postgres.js client (drizzle(ctx.tx)).
      if (key === 'options' && !Reflect.has(target, key)) return options
      const value = Reflect.get(target, key)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        check()
        return Reflect.apply(value, target, args)
      }
    },
  })
}

type Timings = ReturnType<typeof resolveStoreTimings>

interface Verdict {
  verdict: string
  tx: PostgresJsTransaction
}

/**
 * The delivery's sql.begin: the claim, then (claimed) the wait for the store's
 * decision and the held check before postgres.js sends COMMIT. A stale verdict
 * commits its mark; a duplicate rolls back.
 */
function openTransaction(
  sql: PostgresJsSql,
  names: SchemaNames,
  timings: Timings,
  input: BeginInput,
  state: OpenJs,
  tooLate: () => boolean,
): Promise<Verdict> {
  const leaseMs = input.leaseMs ?? timings.leaseMs
  const claimTimeoutMs = Math.max(STORE_STATEMENT_TIMEOUT_MS, timings.lockWaitMs + 1000)
  const decision = new Promise<'commit' | 'rollback'>((resolve) => {
    state.decide = resolve
  })
  return new Promise<Verdict>((announce, reject) => {
    state.done = sql.begin('isolation level read committed', async (tx) => {
      // Past the acquire deadline the delivery was answered 503: claim nothing.
      if (tooLate()) throw new RollBack()
      const params = [
        `${leaseMs}`,
        input.eventId,
        input.conversionId ?? null,
        input.order,
        `${timings.lockWaitMs}ms`,
        timings.dedupeTtl,
        timings.orderingTtl,
        `${leaseMs + SERVER_IDLE_MARGIN_MS}`,
      ]
      // Prepared once per connection: the server parses and plans it once.
      const rows = await within(
        tx.unsafe(claimCallSql(names), params, { prepare: true }),
        claimTimeoutMs,
      )
      const verdict = String((rows[0] as unknown as { verdict: string }).verdict)
      announce({ verdict, tx })
      if (verdict === 'stale') return
      if (!TRANSACTION_ID.test(verdict) || (await decision) === 'rollback') throw new RollBack()
      // The held check goes out with postgres.js's COMMIT, one round trip for
      // both: if it fails, the transaction is aborted and the server answers
      // that COMMIT by rolling back, so sql.begin resolves; the check's own
      // answer says whether anything committed.
      state.held = within(
        tx.unsafe(heldLiteralSql(names, verdict), [], { prepare: false }),
        STORE_STATEMENT_TIMEOUT_MS,
      ).then(
        () => undefined,
        (error: unknown) => {
          state.aborted = isAborted(error)
          return error
        },
      )
    })
    state.done.catch(reject)
  })
}

function beginStep(
  sql: PostgresJsSql,
  names: SchemaNames,
  timings: Timings,
  acquireTimeoutMs: number,
  ready: () => Promise<void>,
  open: Map<string, OpenJs>,
) {
  return async (input: BeginInput): Promise<BeginResult<PostgresJsTransaction>> => {
    await ready()
    const state: OpenJs = {
      xact: '',
      ended: undefined,
      closed: false,
      aborted: false,
      decide: () => {},
      done: Promise.resolve(),
      held: Promise.resolve(),
      timer: undefined,
    }
    let started = false
    let late = false
    const claimed = openTransaction(sql, names, timings, input, state, () => {
      started = true
      return late
    })
    // sql.begin waits for a free connection for ever: the store waits acquireTimeoutMs.
    let deadline: ReturnType<typeof setTimeout> | undefined
    const acquired = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => {
        if (started) return
        late = true
        reject(new Error(`no database connection within ${acquireTimeoutMs} ms`))
      }, acquireTimeoutMs)
    })
    state.done.catch(() => {})
    let verdict: Verdict
    try {
      verdict = await Promise.race([claimed, acquired])
    } catch (error) {
      if (isLockNotAvailable(error)) return { status: 'in_progress' }
      throw error
    } finally {
      clearTimeout(deadline)
    }
    if (TRANSACTION_ID.test(verdict.verdict)) {
      const leaseMs = input.leaseMs ?? timings.leaseMs
      const token = randomUUID()
      state.xact = verdict.verdict
      state.timer = setTimeout(expire, leaseMs, state, leaseMs)
      state.timer.unref()
      open.set(token, state)
      const { eventId, conversionId, order } = input
      const tx = guarded(verdict.tx, state, sql.options)
      return { status: 'claimed', claim: { eventId, conversionId, order, token, tx } }
    }
    // The stale mark commits; the duplicate's rollback is the expected end.
    await state.done.catch((error: unknown) => {
      if (!(error instanceof RollBack)) throw error
    })
    return { status: verdict.verdict } as BeginResult<PostgresJsTransaction>
  }
}

/**
 * The lease ran out while the handler still runs: the transaction rolls back
 * once the handler's statement in flight ends (its statement_timeout is the
 * lease too), and ctx.tx takes no more queries.
 */
function expire(state: OpenJs, leaseMs: number): void {
  if (state.ended !== undefined) return
  state.ended = leaseEnded(leaseMs)
  state.decide('rollback')
}

function commitStep(open: Map<string, OpenJs>, afterCommit: () => void) {
  return async (claim: Claim<PostgresJsTransaction>): Promise<boolean> => {
    const state = takeOpenClaim(open, claim)
    if (state === undefined) return false
    if (state.ended !== undefined) {
      state.closed = true
      await state.done.catch(() => {})
      return false
    }
    state.decide('commit')
    // Both answers, in the order they come: sql.begin's (COMMIT ran, or it
    // rolled back on a failure the handler left behind) and the held check's.
    // Each is undefined when it went well, else the error. A database that
    // stops answering is an error (the delivery is answered 503), not a hang.
    const beginFailure = await within(state.done, 2 * STORE_STATEMENT_TIMEOUT_MS).then(
      () => undefined,
      (error: unknown) => error ?? new Error('sql.begin failed'),
    )
    const heldFailure = await state.held
    state.closed = true
    if (beginFailure !== undefined || heldFailure !== undefined) {
      const error = beginFailure ?? heldFailure
      if (state.aborted)
        throw handlerLeftAborted(error, 'wrap a statement that may fail in tx.savepoint()')
      // The held check failed: the transaction was not the claim's, and nothing committed.
      if (state.ended !== undefined || isLeaseEnd(heldFailure ?? error)) return false
      throw error
    }
    afterCommit()
    return true
  }
}

function releaseStep(open: Map<string, OpenJs>) {
  return async (claim: Claim<PostgresJsTransaction>): Promise<void> => {
    const state = takeOpenClaim(open, claim)
    if (state === undefined) return
    state.closed = true
    state.decide('rollback')
    await state.done.catch(() => {})
  }
}

function otherSteps(
  sql: PostgresJsSql,
  names: SchemaNames,
  timings: Timings,
  ready: () => Promise<void>,
) {
  const run = setupDriver(sql).run
  const prune = async (limit = PRUNE_BATCH): Promise<number> => {
    await ready()
    let deleted = 0
    for (const table of [names.events, names.conversions]) {
      const result = (await within(
        sql.unsafe(pruneSql(table, limit)),
        STORE_STATEMENT_TIMEOUT_MS,
      )) as unknown as { count: number }
      deleted += result.count
    }
    return deleted
  }
  return {
    prune,
    async peek({ eventId, conversionId, order }: PeekInput): Promise<PeekResult> {
      await ready()
      const rows = await run<PeekRow>(peekSql(names), [eventId, conversionId ?? null])
      return peekVerdict(rows[0] as PeekRow, eventId, order)
    },
    recordAnswer: gatedStreak(async (code) => {
      await ready()
      if (code === null) {
        await run(streakResetSql(names))
        return NO_STREAK
      }
      const rows = await run<{ count: number; codes: string[] }>(streakSql(names), [
        code,
        STREAK_CODES_KEPT,
        timings.dedupeTtl,
      ])
      const row = rows[0] as { count: number; codes: string[] }
      return { count: row.count, recentCodes: row.codes }
    }),
  }
}

/** The options' sql, if it is a postgres.js instance with room for a second connection. */
function checkSql(options: PostgresJsStoreOptions): PostgresJsSql {
  const given: unknown = options.sql
  const sql = given as { begin?: unknown; options?: { max: number } }
  if (typeof given !== 'function' || typeof sql.begin !== 'function' || sql.options === undefined) {
    throw new TypeError(
      'postgresStore: `sql` must be a postgres.js instance: postgresStore({ sql: postgres(process.env.DATABASE_URL) })',
    )
  }
  if (sql.options.max < 2) {
    throw new TypeError(
      "postgresStore: the postgres.js instance has max: 1. Its one connection is held by a delivery's transaction while the handler runs, so any query on the outer `sql` meanwhile (the handler's, or another delivery's) would wait for it until the lease ends. Give it max: 2 or more (postgres.js's default is 10).",
    )
  }
  return sql as unknown as PostgresJsSql
}

/** `postgresStore` on postgres.js: see its documentation. */
export function postgresJsStore(options: PostgresJsStoreOptions): PostgresJsEventStore {
  const sql = checkSql(options)
  const names = schemaNames(options, 'postgresStore')
  const timings = resolveStoreTimings(options, 'postgresStore')
  const acquireTimeoutMs = checkAcquireTimeout('postgresStore', options.acquireTimeoutMs ?? 3000)
  const driver = setupDriver(sql)
  let setup: Promise<void> | undefined
  const ready = () => {
    setup ??= ensureSchema(driver, names).catch((error: unknown) => {
      // Tried again on the next call: the database may come up later.
      setup = undefined
      throw error
    })
    return setup
  }
  const open = new Map<string, OpenJs>()
  const rest = otherSteps(sql, names, timings, ready)
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, () => pruneRound(rest.prune))
  return {
    ready,
    begin: beginStep(sql, names, timings, acquireTimeoutMs, ready, open),
    commit: commitStep(open, afterCommit),
    release: releaseStep(open),
    ...rest,
  }
}
