import { randomUUID } from 'node:crypto'
import type {
  BeginInput,
  BeginResult,
  Claim,
  HeldEvent,
  HeldResolution,
  HeldResolved,
  Logger,
  PeekInput,
  PeekResult,
} from '@affiliate-webhooks/core'
import { WebhookError } from '@affiliate-webhooks/core'
import {
  atMostEvery,
  checkResolution,
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
import { claimIn, clearMarker, type HeldRow, markerKept, settledWhileBusy } from './claim.js'
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
import { heldError, heldIn, heldMessage, listed, resolveHeldIn } from './held.js'
import {
  SQLITE_SCHEMA_VERSION,
  type SqliteNames,
  type SqliteSchemaOptions,
  sqliteNames,
  tableStatements,
  upgradeStatements,
} from './schema.js'
import { restoreSession, type Session, sessionOf } from './session.js'
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
  /**
   * Where `close()` says it had to end a delivery's transaction, and where a
   * held event is named (once per event). Default `console`; `false` silences it.
   */
  logger?: Logger | false | undefined
}

/** The SQLite store: `ctx.tx` is the database, inside the delivery's `BEGIN IMMEDIATE` transaction. */
export interface SqliteEventStore<D extends SqliteDatabase = SqliteDatabase>
  extends DatabaseEventStore<D> {
  /**
   * The events held on the file: their mark was committed by a statement of
   * the handler (a COMMIT the store did not send), so their effects may be
   * partial, and every delivery of them (and of newer events of their
   * conversion) is answered 500 `event_held` until resolved.
   */
  heldEvents(): Promise<HeldEvent[]>
  /**
   * Resolves a held event: `'rerun'` puts the conversion's mark back as it was
   * before, so the next delivery runs the handler again (what the first run
   * kept stays); `'accept'` takes it as handled, so its deliveries are
   * duplicates. Rejects when the event is not held.
   */
  resolveHeld(eventId: string, resolution: HeldResolution): Promise<HeldResolved>
}

/** The longest the event loop is blocked at once by a busy connection, ms; longer waits are retried between slices. */
const BUSY_SLICE_MS = 10

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A claim's transaction, and what its ctx.tx watches (`over`, `gone`). */
interface Open extends TxWatch {
  input: BeginInput
  /** The claim's token, on its row until the store's final statement clears it. */
  token: string
  /** The connection's settings before the handler's first PRAGMA, to put back. */
  session: Session | undefined
  timer: ReturnType<typeof setTimeout> | undefined
}

/** The connection and what every step shares. */
interface Context {
  db: SqliteDatabase
  turns: Turns
  names: SqliteNames
  prepared: ReturnType<typeof statementCache>
  timings: ReturnType<typeof resolveStoreTimings>
  logger: Logger | undefined
  /**
   * The savepoint each claim opens after its claim, named once per store so
   * its statements are prepared once, and unguessable by a handler: the store's
   * RELEASE of it fails when a COMMIT or ROLLBACK the store did not send ended
   * the claim's transaction, even if a BEGIN opened another after it.
   */
  savepoint: string
  /** Held events already named in the log by this process. */
  logged: Set<string>
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
 * query_only left on by a statement the store could not see (a handler's
 * PRAGMA on the app's own handle): the store could write nothing, and every
 * later delivery would fail. Put back before the store writes, said in the
 * log; ctx.tx's own PRAGMAs are put back as their delivery ends (session.ts).
 */
function keepWritable(c: Context): void {
  const row = c.prepared('PRAGMA query_only').get() as Record<string, unknown> | undefined
  if (row === undefined || Number(Object.values(row)[0]) === 0) return
  c.db.exec('PRAGMA query_only = OFF')
  c.logger?.warn(
    `sqliteStore: PRAGMA query_only was ON on ${fileOf(c.db)} (set outside ctx.tx, by the app's own handle): turned OFF so the store can write its marks. A handler must not change the connection's settings.`,
  )
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
    keepWritable(c)
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

/** Creates the tables if missing, checks the version (upgrading layout 2 in place), and sets synchronous FULL. */
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
      const upgrade = upgradeStatements(c.names, row.version)
      if (upgrade !== undefined) {
        for (const statement of upgrade) c.db.exec(statement)
        return
      }
      throw new Error(
        `sqliteStore: the table ${c.names.version} in ${fileOf(c.db)} says layout version ${row.version}, and this version of @affiliate-webhooks/sqlite needs ${SQLITE_SCHEMA_VERSION}. Migrate it, or use another tablePrefix.`,
      )
    }
  })
}

/** Names a held event in the log, once per event and process. */
function logHeld(c: Context, held: HeldRow, endedBy: string | undefined): void {
  if (c.logged.has(held.eventId)) return
  c.logged.add(held.eventId)
  c.logger?.error(heldMessage(held, endedBy))
}

/** The claim's transaction for `input`: its verdict, or event_held thrown. */
function claimOrHold(c: Context, input: BeginInput, token: string) {
  const verdict = claimIn(c.prepared, c.names, input, token, c.timings, Date.now())
  if (verdict.verdict === 'held') {
    logHeld(c, verdict.held, undefined)
    throw heldError(verdict.held, input.eventId)
  }
  // Opened after the claim, so the claim's row is under it: see Context.savepoint.
  if (verdict.verdict === 'claimed') c.prepared(`SAVEPOINT ${c.savepoint}`).run()
  return verdict
}

function beginStep(c: Context, ready: () => Promise<void>, open: Map<string, Open>) {
  return async <D extends SqliteDatabase>(input: BeginInput): Promise<BeginResult<D>> => {
    await ready()
    if (c.turns.busy) {
      const settled = settledWhileBusy(c.prepared, c.names, input, c.turns.holder, Date.now())
      if (settled !== undefined) return { status: settled }
    }
    if (!(await takeWriter(c, c.timings.lockWaitMs))) return { status: 'in_progress' }
    const token = randomUUID()
    let verdict: ReturnType<typeof claimOrHold>
    try {
      verdict = claimOrHold(c, input, token)
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
      token,
      session: undefined,
      over: false,
      gone: undefined,
      timer: undefined,
    }
    // Read only on a delivery whose handler may change a setting (see session.ts).
    state.beforeSession = () => {
      state.session = sessionOf(c.db)
    }
    state.markKept = () => markerKept(c.prepared, c.names, input, token)
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

/** Puts back the settings the handler changed, once no transaction is open. */
function restoreAfter(c: Context, state: Open): void {
  if (state.session === undefined || !isOpen(c.db)) return
  const { failed } = restoreSession(c.db, state.session)
  if (failed.length > 0) {
    c.logger?.warn(
      `sqliteStore: the handler of event ${state.input.eventId} changed ${failed.join(', ')} with a PRAGMA and the store could not put it back; later deliveries on this connection run with it`,
    )
  }
}

/**
 * After the claim's transaction ended without the store's commit: whether a
 * statement of the handler committed the mark anyway. Then the event is held,
 * and named in the log.
 */
function heldAfter(c: Context, state: Open): HeldRow | undefined {
  if (!isOpen(c.db) || !markerKept(c.prepared, c.names, state.input, state.token)) return undefined
  const { eventId, conversionId, order } = state.input
  const before = c.turns.holder?.before
  const held: HeldRow = {
    eventId,
    conversionId,
    order: conversionId === undefined ? undefined : order,
    previous: before,
  }
  logHeld(c, held, state.endedBy)
  return held
}

/** Ends a claim's transaction by rolling it back (release, lease) and passes the turn. */
function end(c: Context, state: Open): void {
  clearTimeout(state.timer)
  state.over = true
  rollback(c.db)
  heldAfter(c, state)
  restoreAfter(c, state)
  c.turns.pass()
}

/**
 * Whether the open transaction is still the claim's: ctx.tx saw no end, one is
 * open, and the claim's savepoint is in it (a COMMIT or ROLLBACK followed by a
 * BEGIN in one text leaves a transaction open, but not that savepoint).
 * Releasing it is the check.
 */
function stillTheClaims(c: Context, state: Open): boolean {
  if (state.gone !== undefined || !inTransaction(c.db)) return false
  try {
    c.prepared(`RELEASE ${c.savepoint}`).run()
    return true
  } catch {
    return false
  }
}

/**
 * The answer when the claim's transaction is not the one open (or none is),
 * after rolling back what is: `event_held` when the mark was committed by a
 * statement of the handler, else the handler's failure (500 `handler_failed`):
 * a conflict clause rolled it back, or a COMMIT or ROLLBACK ended it. Only the
 * handler can: the store holds the connection's turn and the file's write
 * lock, and the lease's end takes the claim out before this runs.
 */
function endedByHandler(c: Context, state: Open): WebhookError {
  rollback(c.db)
  const held = heldAfter(c, state)
  if (held !== undefined) return heldError(held, held.eventId, state.endedBy)
  if (state.gone?.cause !== undefined) {
    return handlerLeftAborted(
      state.gone,
      'use ABORT or FAIL (or a savepoint) rather than an OR ROLLBACK or ON CONFLICT ROLLBACK clause or RAISE(ROLLBACK)',
    )
  }
  const why =
    state.gone?.message ??
    'it was ended outside ctx.tx (a COMMIT or ROLLBACK on the database handle itself, or in a text ctx.tx could not read)'
  return new WebhookError(
    'handler_failed',
    `The delivery's transaction ended under the handler (${why}) before the store's commit; the mark was not committed, and nothing the handler wrote was kept: the retry runs the handler again. Write only through ctx.tx, and let the store commit (return) or roll back (throw).`,
    { cause: state.gone },
  )
}

/**
 * The store's final step inside the claim's transaction: the settings its
 * commit needs put back, and the claim's marker cleared. The handler's
 * failure when something it left on the connection refuses that statement.
 */
function clearClaim(c: Context, state: Open): void {
  if (state.session !== undefined) restoreSession(c.db, state.session, ['query_only'])
  let cleared: boolean
  try {
    cleared = clearMarker(c.prepared, c.names, state.input, state.token)
  } catch (error) {
    throw new WebhookError(
      'handler_failed',
      `The store's final statement failed inside the delivery's transaction (${(error as Error).message}): something the handler left on the connection (a setting, a temporary trigger) refuses it. Nothing the handler wrote was kept; the retry runs it again.`,
      { cause: error },
    )
  }
  if (!cleared) {
    throw new WebhookError(
      'handler_failed',
      "The handler changed or removed the store's row of this claim through ctx.tx, so the store could not commit the handled mark. Nothing it wrote was kept; the retry runs it again. Leave the store's tables alone.",
    )
  }
}

function commitStep(c: Context, open: Map<string, Open>, afterCommit: () => void) {
  return async (claim: Claim<unknown>): Promise<boolean> => {
    const state = open.get(claim.token)
    if (state === undefined) return false
    open.delete(claim.token)
    clearTimeout(state.timer)
    state.over = true
    try {
      if (!stillTheClaims(c, state)) throw endedByHandler(c, state)
      clearClaim(c, state)
      await commitOrThrow(c)
    } catch (error) {
      rollback(c.db)
      throw error
    } finally {
      restoreAfter(c, state)
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
          `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? AND claim_token IS NULL LIMIT ?)`,
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
    async heldEvents(): Promise<HeldEvent[]> {
      await ready()
      return (await ownTransaction(c, () => heldIn(prepared, names))).map(listed)
    },
    async resolveHeld(eventId: string, resolution: HeldResolution) {
      const action = checkResolution('sqliteStore', resolution)
      await ready()
      const resolved = await ownTransaction(c, () =>
        resolveHeldIn(prepared, names, eventId, action),
      )
      c.logged.delete(eventId)
      return resolved
    },
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
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  const c: Context = {
    db,
    turns: turnsOf(db),
    names: sqliteNames(options, 'sqliteStore'),
    prepared: statementCache(db),
    timings: resolveStoreTimings(options, 'sqliteStore'),
    logger,
    savepoint: `aw_claim_${randomUUID().replace(/-/g, '')}`,
    logged: new Set(),
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
      logger,
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
