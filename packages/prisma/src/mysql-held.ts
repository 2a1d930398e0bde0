/**
 * Held events of the Prisma store on MySQL/MariaDB: an event whose handled
 * mark a statement of its handler committed (not the store's commit) is
 * answered 500 `event_held` until resolved here. The same tables and SQL as
 * `store.heldEvents()` and `store.resolveHeld()` of `@affiliate-webhooks/mysql`,
 * through the app's Prisma client. They return data and print nothing.
 */
import type { HeldEvent, HeldResolution, HeldResolved } from '@affiliate-webhooks/core'
import { STORE_STATEMENT_TIMEOUT_MS } from '@affiliate-webhooks/core/internal'
import { DIALECT_PACKAGES } from './dialect-loader.js'
import {
  boundedRun,
  type PrismaClientLike,
  type PrismaRawQueries,
  providerOf,
} from './prisma-client.js'

/** Where the store's tables are: the `tablePrefix` given to `prismaStore`. */
export interface PrismaHeldOptions {
  /** Prefix of the store's tables. Default `aw_`. */
  tablePrefix?: string | undefined
}

/** The MySQL store's statements, and the table names; MySQL/MariaDB clients only. */
async function mysqlOf(prisma: PrismaClientLike, options: PrismaHeldOptions, caller: string) {
  if (providerOf(prisma) !== 'mysql') {
    throw new TypeError(
      `${caller}: held events are a MySQL/MariaDB matter (a commit the store did not send cannot be refused there); this Prisma client's provider is ${JSON.stringify(providerOf(prisma) ?? 'unknown')}`,
    )
  }
  let my: typeof import('@affiliate-webhooks/mysql/internal')
  try {
    my = await import('@affiliate-webhooks/mysql/internal')
  } catch (error) {
    throw new Error(`${caller}: needs ${DIALECT_PACKAGES.mysql.name}: npm install it`, {
      cause: error,
    })
  }
  return { my, names: my.schemaNames(options, caller) }
}

/** The held events of the Prisma store on MySQL/MariaDB (a consistent read of its tables). */
export async function prismaHeldEvents(
  prisma: PrismaClientLike,
  options: PrismaHeldOptions = {},
): Promise<HeldEvent[]> {
  const { my, names } = await mysqlOf(prisma, options, 'prismaHeldEvents')
  return my.heldEventsOn(boundedRun(prisma), names)
}

/**
 * Resolves a held event of the Prisma store on MySQL/MariaDB, in one
 * transaction: `'rerun'` puts its conversion's watermark back (its next
 * delivery runs the handler again: undo or tolerate the writes its first run
 * kept); `'accept'` counts it handled as it is (its next delivery a
 * duplicate). Throws if it is not held.
 */
export async function resolvePrismaHeld(
  prisma: PrismaClientLike,
  eventId: string,
  resolution: HeldResolution,
  options: PrismaHeldOptions = {},
): Promise<HeldResolved> {
  const { my, names } = await mysqlOf(prisma, options, 'resolvePrismaHeld')
  return prisma.$transaction(
    (tx) => my.resolveHeldOn(boundedRun(tx as PrismaRawQueries), names, eventId, resolution),
    { timeout: 2 * STORE_STATEMENT_TIMEOUT_MS },
  ) as Promise<HeldResolved>
}
