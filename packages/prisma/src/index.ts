export type { HeldEvent, HeldResolution, HeldResolved } from '@affiliate-webhooks/core'
export {
  type PrismaHeldOptions,
  prismaHeldEvents,
  resolvePrismaHeld,
} from './mysql-held.js'
export type {
  PrismaClientLike,
  PrismaRawQueries,
  PrismaTransaction,
  PrismaTransactionOptions,
} from './prisma-client.js'
export { type PrismaEventStore, type PrismaStoreOptions, prismaStore } from './prisma-store.js'
