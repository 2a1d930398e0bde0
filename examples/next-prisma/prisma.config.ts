import { defineConfig } from 'prisma/config'

// `prisma generate` (in `npm run build`) needs no database; `prisma migrate deploy`
// (`npm run db:deploy`) reads DATABASE_URL.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
})
