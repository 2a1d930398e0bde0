import type {
  BeginInput,
  FailureStreak,
  Logger,
  PeekInput,
  PeekResult,
  WebhookError,
} from '@affiliate-webhooks/core'
import type { SqlDialect } from '@affiliate-webhooks/core/internal'
import type {
  PrismaClientLike,
  PrismaRawQueries,
  PrismaTransactionOptions,
} from './prisma-client.js'

/** What a dialect is built from, whichever database. */
export interface DialectParts {
  prisma: PrismaClientLike
  tablePrefix: string | undefined
  schema: string | undefined
  timings: { lockWaitMs: number; dedupeTtl: number; orderingTtl: number }
  acquireTimeoutMs: number
  /** The store's logger: a held event is named there once. */
  logger?: Logger | undefined
}

/** The claim's answer inside the delivery's transaction. */
export type ClaimVerdict =
  | { status: 'claimed'; held: string }
  | { status: 'duplicate' | 'stale' | 'in_progress' }
  /** MySQL: the row carries a committed marker of `event`, whose mark escaped the store's commit. */
  | { status: 'held'; event: string }

/**
 * PostgreSQL: Prisma's COMMIT waits for the synchronous standbys, a wait the
 * server ends on no timeout of its own. The store bounds it: at its bound it
 * cancels that wait from another session (the transaction then stands on the
 * primary only, answered 503), and a duplicate's or stale mark's commit waits
 * for the standbys as a claim's does.
 */
export interface SyncCommit {
  /**
   * Last statement of a duplicate's or stale verdict's transaction before
   * Prisma's COMMIT: a duplicate writes one WAL record of no effect, so its
   * commit waits for the standbys; either commit is pinned like a claim's.
   * Its transaction's id for {@link SyncCommit.cancel}, or undefined when the
   * role may not write that record: the transaction then rolls back and the
   * duplicate is answered from the mark as it stands.
   */
  settle(tx: PrismaRawQueries, verdict: 'duplicate' | 'stale'): Promise<string | undefined>
  /** The id `cancel` finds a claim's transaction by, from the claim's `held`. */
  xactOf(held: string): string
  /** Cancels the transaction's wait for the standbys if it waits now: whether it did. */
  cancel(xact: string): Promise<boolean>
  /** How long after the cancel the COMMIT may take to answer, ms. */
  graceMs: number
  /** The error (503) of a commit whose wait for the standbys was cancelled. */
  notReplicated(): Error
}

/**
 * One database's part of the Prisma store: its SQL (the Postgres or MySQL
 * store's own texts, run through Prisma's raw queries) and how to read its
 * errors. The interactive transaction around them is the store's, the same for both.
 */
export interface Dialect {
  /** How ctx.tx reads the handler's statements: what ends or splits a transaction here. */
  sql: SqlDialect
  /** `prismaStore: cannot use ...`: the database that failed, never its secret. */
  failure(cause: unknown): Error
  /** Creates or checks the tables, once; learns what the transactions need. */
  ready(): Promise<void>
  /**
   * The line to warn once at start when a failover of this database can lose
   * what the receiver acknowledged (PostgreSQL: asynchronous standbys); undefined
   * when it cannot, or cannot tell. Never throws.
   */
  replicationWarning?(): Promise<string | undefined>
  /** What each delivery's `$transaction` is opened with beyond its bounds. */
  transactionOptions(): Pick<PrismaTransactionOptions, 'isolationLevel'>
  /** Longest the claim may take, ms: it may wait lockWaitMs for a conversion's row on purpose. */
  claimWaitMs: number
  /** PostgreSQL: the bounds of a COMMIT that waits for synchronous standbys. Absent (MySQL): not bounded here. */
  syncCommit?: SyncCommit
  /** The claim, first statement of the delivery's transaction. */
  claim(tx: PrismaRawQueries, input: BeginInput, leaseMs: number): Promise<ClaimVerdict>
  /**
   * Last statement before Prisma's COMMIT: fails unless the transaction is still
   * the claim's (the handler did not end it). On MySQL this is the store's commit.
   */
  beforeCommit(tx: PrismaRawQueries, input: BeginInput, held: string): Promise<void>
  /** Before Prisma's ROLLBACK: puts the session back as the pool expects it. */
  beforeRollback(tx: PrismaRawQueries): Promise<void>
  /** The handler caught a failed statement and went on: the transaction can only roll back. */
  isAborted(error: unknown): boolean
  /** The transaction was over before the store's commit: the server ended it past the lease. */
  isLeaseEnd(error: unknown): boolean
  /**
   * The check before the store's commit found the claim's transaction ended
   * while the session lived: only the handler's statements ran on it, so the
   * handler ended it (a way the guard could not see). Answered 500.
   */
  isHandlerEnded(error: unknown): boolean
  /**
   * Why the transaction is gone after this error of a handler's statement (the
   * database rolled it back whole, and what follows would run on its own);
   * undefined when the transaction is still there.
   */
  goneReason(error: unknown): string | undefined
  /** The answer to a `held` verdict: 500 event_held, saying what was kept and how to resolve it. */
  held?(input: BeginInput, event: string): WebhookError
  /** What the check before the commit learnt when it found the claim's transaction ended (isHandlerEnded): what was kept. */
  endedMessage?(error: unknown): string | undefined
  /** Ends what the dialect keeps open of its own, before the client disconnects. */
  close?(): Promise<void>
  peek(input: PeekInput): Promise<PeekResult>
  record(code: string | null): Promise<FailureStreak>
  prune(limit: number): Promise<number>
}
