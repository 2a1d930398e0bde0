import {
  type PrismaEventStore,
  type PrismaTransaction,
  prismaStore,
} from '@affiliate-webhooks/prisma'
import { PrismaPg } from '@prisma/adapter-pg'
import { PrismaClient } from '../generated/prisma/client'

/**
 * The store's type, for a variable or a parameter: the Prisma store of this
 * app's client, whose handlers get `ctx.tx` as that client's transaction client.
 */
export type WebhookStore = PrismaEventStore<PrismaTransaction<PrismaClient>>

// `next dev` evaluates this module again after each edit: kept on globalThis, the
// client (and its connection pool) and the store are made once per process.
const kept = globalThis as typeof globalThis & {
  prisma?: PrismaClient
  webhookStore?: WebhookStore
}

kept.prisma ??= new PrismaClient({
  adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL }),
})
kept.webhookStore ??= prismaStore({ prisma: kept.prisma })

/** Nothing connects until the first query, so `next build` loads this without DATABASE_URL. */
export const prisma: PrismaClient = kept.prisma

/** Creates its tables (aw_*) beside the app's on first use. */
export const webhookStore: WebhookStore = kept.webhookStore
