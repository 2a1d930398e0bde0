import { randomUUID } from 'node:crypto'
import {
  atMostEvery,
  type BeginInput,
  type BeginResult,
  type Claim,
  checkAcquireTimeout,
  checkoutWithin,
  type DatabaseEventStore,
  type EventStore,
  gatedStreak,
  type Logger,
  NO_STREAK,
  type PeekInput,
  type PeekResult,
  type PooledStoreOptions,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  resolveStoreTimings,
  STREAK_CODES_KEPT,
} from '@affiliate-webhooks/core'
import type { Pool, PoolClient } from 'pg'
import { connectionFailure, isLeaseEnd } from './errors.js'
import { type PostgresSchemaOptions, type SchemaNames, schemaNames } from './schema.js'
import { ensureSchema } from './setup.js'

/** Options of {@link postgresStore}. */
export interface PostgresStoreOptions extends PooledStoreOptions, PostgresSchemaOptions {
  /** A node-postgres `Pool`. The store takes one client per delivery and never ends the pool. */
  pool: Pool
}

/** The Postgres store: `ctx.tx` is the pool client inside the delivery's transaction. */
export interface PostgresEventStore extends DatabaseEventStore<PoolClient> {}

/** A claim's transaction: its client, and whether the server ended the session. */
interface Open {
  client: PoolClient
  ended: Error | undefined
  onError: (error: Error) => void
}

/** A number as SQL text: the store only ever sends safe integers or NULL. */
const int = (value: number | undefined): string => {
  if (value === undefined) return 'NULL'
  if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`)
  return String(value)
}

/**
 * The claim's transaction, kept by token: the Claim the receiver holds carries
 * the client as `tx`, and the store finds its own bookkeeping here.
 */
type OpenTransactions = Map<string, Open>

function beginStep(
  names: SchemaNames,
  timings: ReturnType<typeof resolveStoreTimings>,
  acquire: () => Promise<PoolClient>,
  ready: () => Promise<void>,
  open: OpenTransactions,
) {
  const finish = async (client: PoolClient, sql: string) => {
    try {
      await client.query(sql)
      client.release()
    } catch (error) {
      client.release(error as Error)
      throw error
    }
  }
  return async ({
    eventId,
    conversionId,
    order,
    leaseMs = timings.leaseMs,
  }: BeginInput): Promise<BeginResult<PoolClient>> => {
    await ready()
    const client = await acquire()
    const state: Open = { client, ended: undefined, onError: () => {} }
    // A checked-out client with no 'error' listener would crash the process when
    // the server ends its session (a lease that ran out, a restart). Such a client
    // is useless: it leaves the pool at once, and commit or release find it ended.
    state.onError = (error) => {
      if (state.ended !== undefined) return
      state.ended = error
      client.release(error)
    }
    client.on('error', state.onError)
    let status: string
    try {
      // One round trip: BEGIN, the lease's bounds and the claim in one
      // simple-protocol query. The bounds end a handler that hangs (idle in the
      // transaction) or runs one statement too long; a transaction not claimed
      // ends at once, so setting them before the verdict costs nothing.
      const results = (await client.query(
        `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL statement_timeout = ${int(leaseMs)}; SET LOCAL idle_in_transaction_session_timeout = ${int(leaseMs)}; SELECT ${names.begin}(${client.escapeLiteral(eventId)}, ${int(conversionId)}, ${int(order)}, ${int(timings.lockWaitMs)}, ${int(leaseMs)}, ${int(timings.dedupeTtl)}) AS status`,
      )) as unknown as [unknown, unknown, unknown, { rows: [{ status: string }] }]
      status = results[3].rows[0].status
    } catch (error) {
      client.off('error', state.onError)
      client.release(error as Error)
      throw error
    }
    if (status === 'claimed') {
      const token = randomUUID()
      open.set(token, state)
      return { status: 'claimed', claim: { eventId, conversionId, order, token, tx: client } }
    }
    client.off('error', state.onError)
    // A stale event was marked done inside the transaction: commit it. Nothing else to keep.
    await finish(client, status === 'stale' ? 'COMMIT' : 'ROLLBACK')
    return { status } as BeginResult<PoolClient>
  }
}

function commitStep(
  names: SchemaNames,
  timings: ReturnType<typeof resolveStoreTimings>,
  open: OpenTransactions,
  afterCommit: () => void,
) {
  return async (claim: Claim<PoolClient>): Promise<boolean> => {
    const state = open.get(claim.token)
    // Committed or released already: a second commit changes nothing.
    if (state === undefined) return false
    open.delete(claim.token)
    const { client } = state
    if (state.ended !== undefined) return transactionLost(state.ended)
    try {
      await client.query(
        `SELECT ${names.commit}(${client.escapeLiteral(claim.eventId)}, ${int(claim.conversionId)}, ${int(claim.order)}, ${int(timings.dedupeTtl)}, ${int(timings.orderingTtl)}); COMMIT`,
      )
    } catch (error) {
      if (state.ended !== undefined) return transactionLost(state.ended)
      client.off('error', state.onError)
      // The handler caught a failed statement: the transaction can only roll back.
      await client.query('ROLLBACK').catch(() => {})
      client.release(error as Error)
      return transactionLost(error)
    }
    client.off('error', state.onError)
    client.release()
    afterCommit()
    return true
  }
}

/**
 * Not committed, and never will be: false when the lease ended the transaction
 * (or a statement the handler caught aborted it), the error itself otherwise (the
 * database went away: answered 503, retried).
 */
function transactionLost(error: unknown): boolean {
  if (isLeaseEnd(error)) return false
  throw error
}

function releaseStep(open: OpenTransactions) {
  return async (claim: Claim<PoolClient>): Promise<void> => {
    const state = open.get(claim.token)
    if (state === undefined) return
    open.delete(claim.token)
    const { client } = state
    if (state.ended !== undefined) return
    client.off('error', state.onError)
    try {
      await client.query('ROLLBACK')
      client.release()
    } catch (error) {
      // A client whose rollback failed is not given to anyone else: the server
      // rolls back when the connection closes.
      client.release(error as Error)
    }
  }
}

function streakStep(pool: Pool, names: SchemaNames, dedupeTtl: number, ready: () => Promise<void>) {
  return gatedStreak(async (code) => {
    await ready()
    if (code === null) {
      await pool.query(`DELETE FROM ${names.streak} WHERE name = 'answers'`)
      return NO_STREAK
    }
    const { rows } = await pool.query<{ count: number; codes: string[] }>(
      `INSERT INTO ${names.streak} AS s (name, count, codes, expires_at)
       VALUES ('answers', 1, ARRAY[$1::text], clock_timestamp() + $3::bigint * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET
         count = CASE WHEN s.expires_at <= clock_timestamp() THEN 1 ELSE s.count + 1 END,
         codes = (ARRAY[$1::text] || CASE WHEN s.expires_at <= clock_timestamp() THEN '{}'::text[] ELSE s.codes END)[1:$2::integer],
         expires_at = EXCLUDED.expires_at
       RETURNING count, codes`,
      [code, STREAK_CODES_KEPT, dedupeTtl],
    )
    const row = rows[0] as { count: number; codes: string[] }
    return { count: row.count, recentCodes: row.codes }
  })
}

function pruneStep(pool: Pool, names: SchemaNames, ready: () => Promise<void>) {
  return async (limit = PRUNE_BATCH): Promise<number> => {
    await ready()
    let deleted = 0
    for (const table of [names.events, names.conversions]) {
      const result = await pool.query(
        `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
           SELECT ctid FROM ${table} WHERE expires_at <= clock_timestamp() LIMIT ${int(limit)}))`,
      )
      deleted += result.rowCount ?? 0
    }
    return deleted
  }
}

/** Says once per outage that the pool lost the database, when the app did not listen itself. */
function watchPool(pool: Pool, logger: Logger | undefined): void {
  if (logger === undefined || pool.listenerCount('error') > 0) return
  let reported = false
  pool.on('error', (error: Error) => {
    if (!reported) logger.error(connectionFailure('postgresStore', pool, error).message)
    reported = true
    setTimeout(() => {
      reported = false
    }, PRUNE_EVERY_MS).unref()
  })
}

/**
 * An {@link EventStore} in PostgreSQL whose handled mark commits in the
 * handler's own transaction: `ctx.tx` is the pool client inside it. Write the
 * event's effects through `ctx.tx`, and they and the mark commit together or
 * not at all, so a crash between the two can no longer apply an event twice.
 * Two round trips of its own per delivery (BEGIN + claim; mark + COMMIT).
 */
export function postgresStore(options: PostgresStoreOptions): PostgresEventStore {
  const { pool } = options
  if (pool === undefined || typeof (pool as { connect?: unknown }).connect !== 'function') {
    throw new TypeError('postgresStore: `pool` (a node-postgres Pool) is required')
  }
  const names = schemaNames(options, 'postgresStore')
  const timings = resolveStoreTimings(options, 'postgresStore')
  const timeoutMs = checkAcquireTimeout('postgresStore', options.acquireTimeoutMs ?? 3000)
  const acquire = () =>
    checkoutWithin(
      () => pool.connect(),
      (client) => client.release(),
      timeoutMs,
    )
  const logger = options.logger === false ? undefined : (options.logger ?? console)
  watchPool(pool, logger)
  let setup: Promise<void> | undefined
  const ready = () => {
    setup ??= ensureSchema(pool, names).catch((error: unknown) => {
      // Tried again on the next call: the database may come up later.
      setup = undefined
      throw error
    })
    return setup
  }
  const open: OpenTransactions = new Map()
  const prune = pruneStep(pool, names, ready)
  const afterCommit = atMostEvery(PRUNE_EVERY_MS, prune)

  return {
    ready,
    begin: beginStep(names, timings, acquire, ready, open),
    commit: commitStep(names, timings, open, afterCommit),
    release: releaseStep(open),
    async peek({ eventId, conversionId, order }: PeekInput): Promise<PeekResult> {
      await ready()
      const { rows } = await pool.query<{ done: boolean; watermark: string | null }>(
        `SELECT EXISTS (SELECT 1 FROM ${names.events} WHERE event_id = $1 AND expires_at > clock_timestamp()) AS done,
                (SELECT watermark FROM ${names.conversions} WHERE conversion_id = $2 AND expires_at > clock_timestamp()) AS watermark`,
        [eventId, conversionId ?? null],
      )
      const row = rows[0] as { done: boolean; watermark: string | null }
      if (row.done) return 'duplicate'
      if (row.watermark !== null && Number(row.watermark) >= order) return 'stale'
      return 'unsettled'
    },
    recordAnswer: streakStep(pool, names, timings.dedupeTtl, ready),
    prune,
  }
}
