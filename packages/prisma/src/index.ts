export type {
  PrismaClientLike,
  PrismaRawQueries,
  PrismaTransaction,
  PrismaTransactionOptions,
} from './prisma-client.js'
export { type PrismaEventStore, type PrismaStoreOptions, prismaStore } from './prisma-store.js'
