// The Prisma client and store of a receiver or worker process (STORE=prisma-postgres
// or prisma-mysql): the client generated from test/sql/prisma/<provider>.prisma
// (the test generated it before it started the process), on the driver adapter
// of its database. Node runs the generated TypeScript itself.
import { prismaClientPath } from './prisma-clients.ts'

/** `{ prisma, store }` for DATABASE_URL, with `connections` in the adapter's pool. */
export async function prismaSetUp(kind, url, connections) {
  const { prismaStore } = await import('@affiliate-webhooks/prisma')
  const provider = kind === 'prisma-mysql' ? 'mysql' : 'postgresql'
  const { PrismaClient } = await import(await prismaClientPath(provider))
  let adapter
  if (provider === 'mysql') {
    const { PrismaMariaDb } = await import('@prisma/adapter-mariadb')
    const at = new URL(url)
    adapter = new PrismaMariaDb({
      host: at.hostname,
      port: Number(at.port || 3306),
      user: decodeURIComponent(at.username),
      password: decodeURIComponent(at.password),
      database: at.pathname.slice(1),
      connectionLimit: connections,
    })
  } else {
    const { PrismaPg } = await import('@prisma/adapter-pg')
    adapter = new PrismaPg({ connectionString: url, max: connections })
  }
  const prisma = new PrismaClient({ adapter })
  return { prisma, store: prismaStore({ prisma, logger: false }) }
}
