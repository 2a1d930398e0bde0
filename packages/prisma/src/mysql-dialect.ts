import { randomUUID } from 'node:crypto'
import {
  type BeginInput,
  type FailureStreak,
  type PeekInput,
  WebhookError,
} from '@affiliate-webhooks/core'
import {
  NO_STREAK,
  STORE_STATEMENT_TIMEOUT_MS,
  STREAK_CODES_KEPT,
} from '@affiliate-webhooks/core/internal'
import type * as MysqlStore from '@affiliate-webhooks/mysql/internal'
import type { MysqlRun, PeekRow, SchemaNames } from '@affiliate-webhooks/mysql/internal'
import type { ClaimVerdict, Dialect, DialectParts } from './dialect.js'
import {
  ControlSession,
  gatedClaim,
  killableTransaction,
  learnSemiSync,
  replicatedAnswer,
  replicatedCommit,
  type SemiSyncState,
} from './mysql-semi-sync.js'
import {
  boundedRun,
  databaseError,
  type PrismaRawQueries,
  prismaCode,
  withDatabaseCode,
  within,
} from './prisma-client.js'

/** The MySQL store's statements and procedures, imported when the store first runs. */
export type MysqlInternals = typeof MysqlStore

/** The code of the error when the claim's row is no longer in its transaction. */
const NOT_HELD = 'not_held'

/** How held events are resolved, in messages. */
const RESOLVE = (args: string) => `resolvePrismaHeld(prisma, ${args}) of @affiliate-webhooks/prisma`

/**
 * A write refused as read only (1792): the claim's READ WRITE transaction
 * ended under the handler, by an earlier statement (the session's next
 * transactions are read only until the store puts it back).
 */
const ESCAPED =
  "a write was refused as read only (1792): an earlier statement of the handler ended the delivery's transaction (a COMMIT, ROLLBACK or implicit commit the store did not send). If it committed, the writes before it and the event's mark were kept, nothing after it, and the event is held (its retries are answered 500 event_held until resolved); if it rolled back, nothing was kept and the retry runs the handler again"

/** The claim's key, its conversion and its token: what the commit and the hold check name. */
interface Marked {
  key: string
  conversionId: number | string | undefined
  token: string
}

/**
 * Why InnoDB ended the transaction under the handler after this error, or
 * undefined: a deadlock rolls the whole transaction back (savepoints, the
 * claim's row and lock with it), and so does a lock wait timeout when the
 * server runs with innodb_rollback_on_timeout. The session is then in
 * autocommit (Prisma's BEGIN left it on), so a statement after it would
 * commit on its own: the guard refuses them all.
 */
export function innodbGone(error: unknown, rollbackOnTimeout: boolean): string | undefined {
  const { code } = databaseError(error)
  // P2034: a model query's deadlock or write conflict, as Prisma names it.
  if (code === '1213' || prismaCode(error) === 'P2034') {
    return 'a deadlock (1213): InnoDB rolled the whole transaction back'
  }
  if (code === '1205' && rollbackOnTimeout) {
    return 'a lock wait timeout (1205) with innodb_rollback_on_timeout on: InnoDB rolled the whole transaction back'
  }
  if (code === '1792') return ESCAPED
  return undefined
}

/**
 * The first row of a CALL's first result set, as an array of its columns; none
 * when the procedure answered no result set. Prisma's MariaDB adapter returns a
 * CALL's result sets as rows of one unnamed column (the first result set's
 * first row, as an array, under the key `undefined`); a named row is read too.
 */
export function firstCallRow(rows: unknown): unknown[] | undefined {
  if (!Array.isArray(rows) || rows.length === 0) return undefined
  const first = rows[0] as Record<string, unknown> | unknown[]
  if (Array.isArray(first)) return first
  const values = Object.values(first)
  const only = values[0]
  if (values.length === 1 && Array.isArray(only)) return only
  return values
}

function failure(cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message : String(cause)
  const code = (cause as { code?: unknown } | undefined)?.code
  return new Error(
    `prismaStore: cannot use the MySQL database of the Prisma client (${typeof code === 'string' ? `${code}: ` : ''}${reason.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s]*/gi, '<url>').trim()}). Check the connection settings of the client's adapter (new PrismaMariaDb(...)) and that the server is up.`,
    { cause },
  )
}

/**
 * The MySQL store's layout, procedures and statements (from
 * `@affiliate-webhooks/mysql`) through Prisma's raw queries: the same tables
 * and answers as with mysql2. The claim and commit procedures end and begin
 * transactions themselves; Prisma's own COMMIT or ROLLBACK after them finds
 * nothing left to do.
 */
export function mysqlDialect(my: MysqlInternals, parts: DialectParts): Dialect {
  const { prisma, timings } = parts
  const names = my.schemaNames(parts, 'prismaStore')
  const run = boundedRun(prisma)
  // Whether a lock wait timeout rolls back the whole transaction (read at setup).
  let rollbackOnTimeout = false
  // Semi-sync: whether each commit is checked (read at setup); a session for the KILL past the bound.
  const semi: SemiSyncState = { reader: undefined, off: false, away: false, warning: undefined }
  const control = new ControlSession(prisma)
  const on = (tx: PrismaRawQueries) => ({ control, tx, logger: parts.logger })
  const writeStreak = streakWrite(parts, control, semi)
  // InnoDB counts a row-lock wait in whole seconds: lockWaitMs, rounded up.
  const waitSeconds = Math.ceil(timings.lockWaitMs / 1000)
  const claimWaitMs = Math.max(STORE_STATEMENT_TIMEOUT_MS, waitSeconds * 1000 + 1000)
  // The setup and a prune round need one session (a named lock, a session bound).
  const onOneSession = <T>(work: (tx: PrismaRawQueries) => Promise<T>) =>
    prisma.$transaction((tx) => work(tx as PrismaRawQueries), {
      maxWait: parts.acquireTimeoutMs,
      timeout: 30_000,
    })
  return {
    sql: 'mysql',
    failure,
    async ready() {
      await onOneSession((tx) => my.ensureSchema(boundedRun(tx), names))
      const rows = await run<{ on: unknown }>('SELECT @@innodb_rollback_on_timeout AS `on`')
      rollbackOnTimeout = Number(rows[0]?.on) === 1
      await learnSemiSync(my, prisma, semi)
      if (semi.reader !== undefined) await control.open()
    },
    close: () => control.close(),
    replicationWarning: async () => semi.warning,
    transactionOptions: () => ({}),
    claimWaitMs,
    async claim(tx, input: BeginInput, leaseMs): Promise<ClaimVerdict> {
      const verdict = await gatedClaim(
        my,
        on(tx),
        semi,
        () => claimCall(my, tx, { names, timings, waitSeconds }, input, leaseMs),
        claimWaitMs - 1000,
      )
      // Answered 2xx from a mark: once a replica has it.
      if (verdict.status === 'duplicate' || verdict.status === 'stale')
        await replicatedAnswer(my, on(tx), semi, names.streak)
      return verdict
    },
    async beforeCommit(tx, input, token) {
      const key = my.eventKey(input.eventId)
      const rows = await replicatedCommit(
        my,
        on(tx),
        semi,
        () =>
          tx.$queryRawUnsafe(
            `CALL ${names.commit}(?, ?, ?)`,
            key,
            input.conversionId ?? null,
            token,
          ),
        () => tx.$executeRawUnsafe(`CALL ${names.release}()`),
      )
      if (firstCallRow(rows) === undefined) return
      const marked = { key, conversionId: input.conversionId, token }
      const kept = await markKept(run, names, marked).catch(() => undefined)
      throw Object.assign(new Error(endedWith(input, kept)), { code: NOT_HELD })
    },
    held: heldAnswer(my, parts),
    endedMessage: (error) =>
      (error as { code?: unknown } | undefined)?.code === NOT_HELD
        ? (error as Error).message
        : undefined,
    async beforeRollback(tx) {
      await tx.$executeRawUnsafe(`CALL ${names.release}()`)
    },
    // MySQL has no aborted state: a failed statement leaves the transaction usable.
    isAborted: () => false,
    // A session the server ended past the lease fails the commit's CALL (503); Prisma's
    // own timeout comes after the store's lease timer, which settles first (not committed).
    isLeaseEnd: () => false,
    // The claim's savepoint is gone while the session lived: the handler ended the transaction.
    isHandlerEnded: (error) => (error as { code?: unknown } | undefined)?.code === NOT_HELD,
    goneReason: (error) => innodbGone(error, rollbackOnTimeout),
    async peek({ eventId, conversionId, order }: PeekInput) {
      const key = my.eventKey(eventId)
      const rows = await run<PeekRow>(my.peekSql(names), [key, key, conversionId ?? null])
      return my.peekVerdict(rows[0], order)
    },
    record: (code) => recordAnswer(writeStreak, { names, timings, semi }, code),
    async prune(limit) {
      const round = (tx: PrismaRawQueries) => pruneRound(my, tx, names, limit)
      if (semi.reader === undefined) return onOneSession(round)
      const done = await killableTransaction(prisma, control, parts.acquireTimeoutMs, round)
      if ('killed' in done) throw new Error(PRUNE_KILLED, { cause: done.killed })
      return done.value
    },
  }
}

/** A write of the answer streak: its rows, or the error of a session killed at the bound. */
type StreakWrite = (
  text: string,
  values: unknown[],
) => Promise<{ rows: unknown[] } | { killed: unknown }>

/**
 * The answer streak's CALL: a plain statement on the pool, or, with semi-sync
 * checked, in a transaction whose wait for a replica ends at the bound.
 */
function streakWrite(
  parts: DialectParts,
  control: ControlSession,
  semi: SemiSyncState,
): StreakWrite {
  return async (text, values) => {
    if (semi.reader === undefined) return { rows: await boundedRun(parts.prisma)(text, values) }
    const done = await killableTransaction(parts.prisma, control, parts.acquireTimeoutMs, (tx) =>
      boundedRun(tx)(text, values),
    )
    return 'killed' in done ? { killed: done.killed } : { rows: done.value }
  }
}

const PRUNE_KILLED =
  'prismaStore: a prune round did not end within the bound (its commit waiting for a replica): its session was ended'

/**
 * The answer streak's CALL; not while no replica acknowledges (its commit
 * would wait for one: each process counts meanwhile). One whose commit waited
 * past the bound says so too, and no more are written until a delivery's
 * commit is acknowledged.
 */
async function recordAnswer(
  write: StreakWrite,
  on: { names: SchemaNames; timings: DialectParts['timings']; semi: SemiSyncState },
  code: string | null,
): Promise<FailureStreak> {
  const away = (cause?: unknown) =>
    new Error('prismaStore: no replica acknowledges; the streak is counted per process', {
      cause,
    })
  if (on.semi.reader !== undefined && on.semi.away) throw away()
  const written = await write(`CALL ${on.names.recordAnswer}(?, ?, ?)`, [
    code,
    STREAK_CODES_KEPT,
    on.timings.dedupeTtl,
  ])
  if ('killed' in written) {
    on.semi.away = true
    throw away(written.killed)
  }
  const rows = written.rows
  const [failures, codes] = firstCallRow(rows) ?? [0, '']
  const count = Number(failures)
  return count === 0 ? NO_STREAK : { count, recentCodes: String(codes).split(',') }
}

/** The claim's CALL in the delivery's transaction, and its verdict. */
async function claimCall(
  my: MysqlInternals,
  tx: PrismaRawQueries,
  on: { names: SchemaNames; timings: DialectParts['timings']; waitSeconds: number },
  input: BeginInput,
  leaseMs: number,
): Promise<ClaimVerdict> {
  const { names, timings } = on
  const token = randomUUID()
  const rows = await tx.$queryRawUnsafe(
    `CALL ${names.claim}(?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    my.eventKey(input.eventId),
    input.conversionId ?? null,
    input.order,
    // The server ends a session idle past the lease (and a second).
    Math.ceil(leaseMs / 1000) + 1,
    on.waitSeconds,
    timings.dedupeTtl,
    timings.orderingTtl,
    // Autocommit stays as Prisma's session has it: Prisma ends its own
    // transactions (a timeout's ROLLBACK) and hands the connection back
    // without the store's commit or release to turn it on again. After a
    // deadlock, ctx.tx's guard refuses what would autocommit (innodbGone).
    0,
    token,
  )
  const row = firstCallRow(rows)
  // The token rides in `held`, which the commit gets back.
  if (row === undefined) return { status: 'claimed', held: token }
  const verdict = String(row[0])
  if (verdict === 'held') return { status: 'held', event: textOf(row[1]) }
  return { status: verdict as 'duplicate' | 'stale' | 'in_progress' }
}

/** The answer to a held verdict (500 event_held), the hold named in the log once per process. */
function heldAnswer(my: MysqlInternals, parts: DialectParts) {
  const logged = new Set<string>()
  return (input: BeginInput, event: string): WebhookError => {
    const conversion = input.conversionId === undefined ? undefined : String(input.conversionId)
    if (!logged.has(event)) {
      if (logged.size >= 10_000) logged.clear()
      logged.add(event)
      parts.logger?.error(my.heldMessage('prismaStore', event, event, conversion, RESOLVE))
    }
    return new WebhookError(
      'event_held',
      my.heldMessage('prismaStore', input.eventId, event, conversion, RESOLVE),
    )
  }
}

const textOf = (value: unknown) =>
  value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : String(value)

/** Whether the claim's marker was committed (its mark escaped the store's commit): a consistent read, outside the transaction. */
async function markKept(run: MysqlRun, names: SchemaNames, marked: Marked): Promise<boolean> {
  const rows =
    marked.conversionId === undefined
      ? await run(`SELECT 1 AS k FROM ${names.events} WHERE event_id = ? AND claim_token = ?`, [
          marked.key,
          marked.token,
        ])
      : await run(
          `SELECT 1 AS k FROM ${names.conversions} WHERE conversion_id = ? AND claim_token = ?`,
          [marked.conversionId, marked.token],
        )
  return rows.length > 0
}

/** The claim's transaction was ended under the handler, unseen by ctx.tx: what was kept, truthfully. */
function endedWith(input: BeginInput, kept: boolean | undefined): string {
  const start =
    "prismaStore: the delivery's transaction was ended before the store's commit by a statement the handler ran on ctx.tx that the store could not see (a COMMIT, ROLLBACK or implicit commit, maybe inside a procedure or a compound statement)"
  if (kept === true) {
    const newer =
      input.conversionId === undefined
        ? ''
        : ` and newer events of conversion ${input.conversionId}`
    return `${start}, with a commit: the writes before it and the event's handled mark were kept, nothing after it (the session's transactions after it are read only). The event is held: its retries${newer} are answered 500 event_held until resolved with ${RESOLVE(`'${input.eventId}', 'rerun' | 'accept'`)}. Let the store commit (return from the handler) or roll back (throw).`
  }
  if (kept === false) {
    return `${start}: nothing it wrote was kept, nor the mark, and the retry runs the handler again. Let the store commit (return from the handler) or roll back (throw).`
  }
  return `${start}; whether its mark was kept could not be read (the database is unreachable): the retry is answered 500 event_held if it was, and runs the handler again if not.`
}

/** One round of pruning on one session: expired keys by a consistent read, then deleted by key. */
async function pruneRound(
  my: MysqlInternals,
  tx: PrismaRawQueries,
  names: SchemaNames,
  limit: number,
): Promise<number> {
  const run = boundedRun(tx)
  let deleted = 0
  await run(my.PRUNE_WAIT_SQL)
  try {
    for (const { table, key } of my.PRUNED(names)) {
      const keys = (await run<{ k: unknown }>(my.pruneKeysSql(table, key), [limit])).map((r) => r.k)
      if (keys.length === 0) continue
      try {
        deleted += await within(
          tx.$executeRawUnsafe(my.pruneDeleteSql(table, key, keys.length), ...keys),
          STORE_STATEMENT_TIMEOUT_MS,
        )
      } catch (error) {
        // A row retaken by a claim in flight: left for the next round.
        if ((withDatabaseCode(error) as { code?: unknown }).code !== '1205') throw error
      }
    }
  } finally {
    await run(my.PRUNE_RESTORE_SQL)
  }
  return deleted
}
