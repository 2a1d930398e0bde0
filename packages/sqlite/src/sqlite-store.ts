import { randomUUID } from 'node:crypto'
import type {
  BeginInput,
  BeginResult,
  Claim,
  Logger,
  PeekInput,
  PeekResult,
} from '@affiliate-webhooks/core'
import { WebhookError } from '@affiliate-webhooks/core'
import {
  atMostEvery,
  closer,
  type DatabaseEventStore,
  gatedStreak,
  handlerLeftAborted,
  NO_STREAK,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  pruneRound,
  resolveStoreTimings,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_CODES_KEPT,
  type StoreTimings,
} from '@affiliate-webhooks/core/internal'
import { claimIn, settledWhileBusy, stillHeld } from './claim.js'
import {
  checkDatabase,
  fileOf,
  guarded,
  inTransaction,
  isBusy,
  isOpen,
  type SqliteDatabase,
  statementCache,
  type TxWatch,
} from './database.js'
import {
  SQLITE_SCHEMA_VERSION,
  type SqliteNames,
  type SqliteSchemaOptions,
  sqliteNames,
  tableStatements,
} from './schema.js'
import { type Turns, turnsOf } from './turns.js'

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions<D extends SqliteDatabase = SqliteDatabase>
  extends StoreTimings,
    SqliteSchemaOptions {
  /**
   * A node:sqlite `DatabaseSync` or a better-sqlite3 `Database` on a file. The
   * store sets `PRAGMA synchronous = FULL` on it (if it was lower) and closes
   * it only when you call `store.close()`.
   */
  database: D
  /** Where `close()` says it had to end a delivery's transaction. Default `console`; `false` silences it. */
  logger?: Logger | false | undefined
}

/** The SQLite store: `ctx.tx` is the database, inside the delivery's `BEGIN IMMEDIATE` transaction. */
export interface SqliteEventStore<D extends SqliteDatabase = SqliteDatabase>
  extends DatabaseEventStore<D> {}

/** The longest the event loop is blocked at once by a busy connection, ms; longer waits are retried between slices. */
const BUSY_SLICE_MS = 10

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A claim's transaction, and what its ctx.tx watches (`over`, `gone`). */
interface Open extends TxWatch {
  input: BeginInput
  wrote: { watermark: number; expiresAt: number }
  timer: ReturnType<typeof setTimeout> | undefined
}

/** The connection and what every step shares. */
interface Context {
  db: SqliteDatabase
  turns: Turns
  names: SqliteNames
  prepared: ReturnType<typeof statementCache>
  timings: ReturnType<typeof resolveStoreTimings>
}

/**
 * Runs `statement` with the connection's busy timeout set to one slice,
 * retried between slices until `untilMs` (a performance.now() time): another
 * process's write lock is waited for without blocking the event loop for
 * long. False when the time ran out while busy.
 */
async function whileBusy(c: Context, statement: string, untilMs: number): Promise<boolean> {
  const { db } = c
  // Read through the store's statement cache: preparing it anew costs more
  // than the rest of the two calls a delivery makes here (bench:sql).
  const saved = (c.prepared('PRAGMA busy_timeout').get() as { timeout: number }).timeout
  db.exec(`PRAGMA busy_timeout = ${BUSY_SLICE_MS}`)
  try {
    for (;;) {
      try {
        db.exec(statement)
        return true
      } catch (error) {
        if (!isBusy(error)) throw error
      }
      if (performance.now() >= untilMs) return false
      await sleep(Math.min(BUSY_SLICE_MS, Math.max(1, untilMs - performance.now())))
    }
  } finally {
    db.exec(`PRAGMA busy_timeout = ${saved}`)
  }
}

/**
 * Rolls back if a transaction is open; a failure here leaves nothing to undo. A
 * database the app has closed meanwhile (its lease timer firing after shutdown)
 * has nothing open: closing it rolled back what was.
 */
function rollback(db: SqliteDatabase): void {
  if (!isOpen(db) || !inTransaction(db)) return
  try {
    db.exec('ROLLBACK')
  } catch {
    // SQLite rolled back by itself (an I/O error, a full disk): nothing is left open.
  }
}

/**
 * The connection's turn and its write lock within `waitMs`: true with a
 * transaction open (BEGIN IMMEDIATE), false (turn passed on) when another
 * delivery or process kept them past it.
 */
async function takeWriter(c: Context, waitMs: number): Promise<boolean> {
  const until = performance.now() + waitMs
  if (!(await c.turns.take(waitMs))) return false
  try {
    if (inTransaction(c.db)) {
      throw new Error(
        `sqliteStore: a transaction is already open on ${fileOf(c.db)} outside the store's deliveries: the store needs the connection between your transactions (or give it a connection of its own)`,
      )
    }
    if (await whileBusy(c, 'BEGIN IMMEDIATE', until)) return true
  } catch (error) {
    c.turns.pass()
    throw error
  }
  c.turns.pass()
  return false
}

/** One short write transaction of the store's own (setup, streak, prune), in its turn. */
async function ownTransaction<T>(c: Context, work: () => T): Promise<T> {
  if (!(await takeWriter(c, STORE_STATEMENT_TIMEOUT_MS))) {
    throw new Error(
      `sqliteStore: ${fileOf(c.db)} stayed locked by another writer for ${STORE_STATEMENT_TIMEOUT_MS} ms`,
    )
  }
  try {
    const result = work()
    await commitOrThrow(c)
    return result
  } catch (error) {
    rollback(c.db)
    throw error
  } finally {
    c.turns.pass()
  }
}

/** COMMIT, retried while readers of a rollback-journal database keep it busy. */
async function commitOrThrow(c: Context): Promise<void> {
  if (!(await whileBusy(c, 'COMMIT', performance.now() + STORE_STATEMENT_TIMEOUT_MS))) {
    throw new Error(
      `sqliteStore: COMMIT on ${fileOf(c.db)} stayed busy for ${STORE_STATEMENT_TIMEOUT_MS} ms`,
    )
  }
}

/** Creates the tables if missing, checks the version, and sets synchronous FULL. */
function setUp(c: Context): Promise<void> {
  const level = (c.db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous
  // FULL: a 2xx tells the service never to send the event again, so the commit
  // it acknowledges must survive a power cut, not only a crash of the process.
  if (level < 2) c.db.exec('PRAGMA synchronous = FULL')
  return ownTransaction(c, () => {
    for (const statement of tableStatements(c.names)) c.db.exec(statement)
    const row = c.prepared(`SELECT version FROM ${c.names.version} LIMIT 1`).get() as
      | { version: number }
      | undefined
    if (row === undefined) {
      c.prepared(`INSERT INTO ${c.names.version} (version) VALUES (?)`).run(SQLITE_SCHEMA_VERSION)
    } else if (row.version !== SQLITE_SCHEMA_VERSION) {
      throw new Error(
        `sqliteStore: the table ${c.names.version} in ${fileOf(c.db)} says layout version ${row.version}, and this version of @affiliate-webhooks/sqlite needs ${SQLITE_SCHEMA_VERSION}. Migrate it, or use another tablePrefix.`,
      )
    }
  })
}

function beginStep(c: Context, ready: () => Promise<void>, open: Map<string, Open>) {
  return async <D extends SqliteDatabase>(input: BeginInput): Promise<BeginResult<D>> => {
    await ready()
    if (c.turns.busy) {
      const settled = settledWhileBusy(c.prepared, c.names, input, c.turns.holder, Date.now())
      if (settled !== undefined) return { status: settled }
    }
    if (!(await takeWriter(c, c.timings.lockWaitMs))) return { status: 'in_progress' }
    let verdict: ReturnType<typeof claimIn>
    try {
      verdict = claimIn(c.prepared, c.names, input, c.timings, Date.now())
      if (verdict.verdict === 'stale') await commitOrThrow(c)
      if (verdict.verdict === 'duplicate') rollback(c.db)
    } catch (error) {
      rollback(c.db)
      c.turns.pass()
      throw error
    }
    if (verdict.verdict !== 'claimed') {
      c.turns.pass()
      return { status: verdict.verdict }
    }
    c.turns.holder = verdict.holder
    const leaseMs = input.leaseMs ?? c.timings.leaseMs
    const state: Open = {
      input,
      wrote: verdict.wrote,
      over: false,
      gone: undefined,
      timer: undefined,
    }
    const token = randomUUID()
    state.timer = setTimeout(() => {
      // The lease ran out while the handler still runs: its transaction rolls
      // back now, ctx.tx refuses it from here, and the next delivery may go.
      if (open.delete(token)) end(c, state)
    }, leaseMs)
    state.timer.unref()
    open.set(token, state)
    const tx = guarded(c.db as D, state)
    const { eventId, conversionId, order } = input
    return { status: 'claimed', claim: { eventId, conversionId, order, token, tx } }
  }
}

/** Ends a claim's transaction by rolling it back (release, lease) and passes the turn. */
function end(c: Context, state: Open): void {
  clearTimeout(state.timer)
  state.over = true
  rollback(c.db)
  c.turns.pass()
}

/**
 * The handler's failure (500 `handler_failed`) when the transaction holding
 * the mark is not the claim's any more: a conflict clause rolled it back, or a
 * COMMIT or ROLLBACK on the outer handle ended it (maybe with a BEGIN after).
 * Only the handler can: the store holds the connection's turn and the file's
 * write lock, and the lease's end takes the claim out before this runs.
 */
function endedByHandler(c: Context, state: Open): WebhookError | undefined {
  if (state.gone !== undefined && state.gone.cause !== undefined) {
    return handlerLeftAborted(
      state.gone,
      'use ABORT or FAIL (or a savepoint) rather than an OR ROLLBACK or ON CONFLICT ROLLBACK clause or RAISE(ROLLBACK)',
    )
  }
  if (
    state.gone === undefined &&
    inTransaction(c.db) &&
    stillHeld(c.prepared, c.names, state.input, state.wrote)
  ) {
    return undefined
  }
  const why =
    state.gone?.message ??
    'it was ended outside ctx.tx (a COMMIT or ROLLBACK on the database handle itself)'
  return new WebhookError(
    'handler_failed',
    `The delivery's transaction ended under the handler (${why}), so the store could not commit the handled mark with the handler's writes. Write only through ctx.tx, and let the store commit (return) or roll back (throw).`,
    { cause: state.gone },
  )
}

function commitStep(c: Context, open: Map<string, Open>, afterCommit: () => void) {
  return async (claim: Claim<unknown>): Promise<boolean> => {
    const state = open.get(claim.token)
    if (state === undefined) return false
    open.delete(claim.token)
    clearTimeout(state.timer)
    state.over = true
    try {
      const ended = endedByHandler(c, state)
      if (ended !== undefined) {
        rollback(c.db)
        throw ended
      }
      await commitOrThrow(c)
    } catch (error) {
      rollback(c.db)
      throw error
    } finally {
      c.turns.pass()
    }
    afterCommit()
    return true
  }
}

function releaseStep(c: Context, open: Map<string, Open>) {
  return async (claim: Claim<unknown>): Promise<void> => {
    const state = open.get(claim.token)
    if (state === undefined) return
    open.delete(claim.token)
    end(c, state)
  }
}

function otherSteps(c: Context, ready: () => Promise<void>) {
  const { names, prepared } = c
  const prune = async (limit = PRUNE_BATCH): Promise<number> => {
    await ready()
    return ownTransaction(c, () => {
      let deleted = 0
      for (const table of [names.events, names.conversions]) {
        const result = prepared(
          `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)`,
        ).run(Date.now(), limit) as { changes: number | bigint }
        deleted += Number(result.changes)
      }
      return deleted
    })
  }
  const record = (code: string) =>
    ownTransaction(c, () => {
      const now = Date.now()
      const row = prepared(
        `SELECT count, codes, expires_at FROM ${names.streak} WHERE name = 'answers'`,
      ).get() as { count: number; codes: string; expires_at: number } | undefined
      const live = row !== undefined && row.expires_at > now
      const count = live ? row.count + 1 : 1
      const codes = [code, ...(live ? (JSON.parse(row.codes) as string[]) : [])].slice(
        0,
        STREAK_CODES_KEPT,
      )
      prepared(
        `INSERT INTO ${names.streak} (name, count, codes, expires_at) VALUES ('answers', ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET count = excluded.count, codes = excluded.codes, expires_at = excluded.expires_at`,
      ).run(count, JSON.stringify(codes), now + c.timings.dedupeTtl)
      return { count, recentCodes: codes }
    })
  return {
    prune,
    async peek(input: PeekInput): Promise<PeekResult> {
      await ready()
      const holder = c.turns.holder
      return settledWhileBusy(prepared, names, { ...input }, holder, Date.now()) ?? 'unsettled'
    },
    recordAnswer: gatedStreak(async (code) => {
      await ready()
      if (code !== null) return record(code)
      await ownTransaction(c, () =>
        prepared(`DELETE FROM ${names.streak} WHERE name = 'answers'`).run(),
      )
      return NO_STREAK
    }),
  }
}

/**
 * An `EventStore` in SQLite whose handled mark commits in the handler's
 * own transaction: `ctx.tx` is the database (node:sqlite `DatabaseSync` or
 * better-sqlite3 `Database`) inside the delivery's `BEGIN IMMEDIATE`. Write the
 * event's effects through `ctx.tx` and they and the mark commit together or
 * not at all. SQLite has one writer: deliveries on one connection take turns,
 * and processes on one file wait for each other's write lock, each at most
 * `lockWaitMs` (then 409, retried).
 */
export function sqliteStore<D extends SqliteDatabase>(
  options: SqliteStoreOptions<D>,
): SqliteEventStore<D> {
  const db = checkDatabase((options as { database?: unknown } | undefined)?.database)
  const c: Context = {
    db,
    turns: turnsOf(db),
    names: sqliteNames(options, 'sqliteStore'),
    prepared: statementCache(db),
    timings: resolveStoreTimings(options, 'sqliteStore'),
  }
  let setup: Promise<void> | undefined
  const ready = () => {
    setup ??= setUp(c).catch((error: unknown) => {
      setup = undefined
      throw error
    })
    return setup
  }
  const open = new Map<string, Open>()
  const rest = otherSteps(c, ready)
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, () => pruneRound(rest.prune))
  const endConnection = () => {
    if (isOpen(db)) (db as SqliteDatabase & { close(): unknown }).close()
  }
  return {
    ready,
    begin: beginStep(c, ready, open),
    commit: commitStep(c, open, afterCommit),
    release: releaseStep(c, open),
    ...rest,
    // The deliveries in flight end first; past the deadline, closing the
    // connection rolls back what they wrote (they are retried, nothing is marked).
    close: closer(
      'sqliteStore',
      options.logger === false ? undefined : (options.logger ?? console),
      async () => {
        // Ends once the connection is closed too: after the deadline's forced close, a
        // delivery that never settles must not keep this loop (and the process) alive.
        while (open.size > 0 && isOpen(db)) await sleep(10)
        endConnection()
      },
      endConnection,
    ),
  } as SqliteEventStore<D>
}
