/**
 * `ctx.tx`'s type on Prisma, checked by the compiler against clients generated
 * from this folder's schemas: inside a handler on `prismaStore({ prisma })` it
 * is the type Prisma gives `tx` in `prisma.$transaction(async (tx) => ...)`,
 * with the app's generated models, and not `any`. `npm run typecheck` cannot
 * see this (the clients are generated at test time, and git-ignored), so each
 * provider's fixture is compiled here with the repository's own settings.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, dirname, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { type PrismaTestProvider, prismaClientPath } from './prisma-clients.js'

const run = promisify(execFile)
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const root = fileURLToPath(new URL('../../', import.meta.url))
// Beside the generated clients: git-ignored, and outside the repository's own typecheck.
const scratch = fileURLToPath(
  new URL(`./prisma/generated/.types-${randomUUID()}/`, import.meta.url),
)

afterAll(() => rm(scratch, { recursive: true, force: true }))

const ADAPTER: Record<PrismaTestProvider, string> = {
  postgresql: `import { PrismaPg } from '@prisma/adapter-pg'
const adapter = new PrismaPg({ connectionString: 'postgres://localhost/app' })`,
  mysql: `import { PrismaMariaDb } from '@prisma/adapter-mariadb'
const adapter = new PrismaMariaDb({ host: 'localhost', database: 'app' })`,
}

/**
 * A handler as an app writes it. Each `@ts-expect-error` must meet its error:
 * were ctx.tx `any`, or the client itself, the directive would be unused and
 * the compile fail.
 */
function fixture(provider: PrismaTestProvider, client: string): string {
  return `import { createReceiver } from '@affiliate-webhooks/core'
import { prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaClient } from '${client}'
${ADAPTER[provider]}

const prisma = new PrismaClient({ adapter })
const store = prismaStore({ prisma })

export const receiver = createReceiver({
  secret: 'whsec_types',
  store,
  async onConversion(conversion, event, ctx) {
    // The generated models and the raw queries, typed as on the transaction client.
    await ctx.tx.effect.create({
      data: { eventId: event.id, conversionId: BigInt(conversion.id), eventOrder: 1n, pid: 1 },
    })
    const rows: { conversionId: bigint }[] = await ctx.tx.conversionState.findMany({ select: { conversionId: true } })
    const changed: number = await ctx.tx.$executeRaw\`UPDATE conversion_state SET status = 'seen'\`
    void rows
    void changed
    // The same type as the tx of the app's own interactive transaction, both ways.
    await prisma.$transaction(async (tx) => {
      let fromStore = ctx.tx
      fromStore = tx
      let fromPrisma = tx
      fromPrisma = ctx.tx
      void fromStore
      void fromPrisma
    })
    // @ts-expect-error a model the schema does not have
    await ctx.tx.ledger.create({ data: {} })
    // @ts-expect-error a field of the wrong type (pid is an Int)
    await ctx.tx.effect.create({ data: { eventId: 'e', conversionId: 1n, eventOrder: 1n, pid: 'one' } })
    // @ts-expect-error the transaction client has no $disconnect (Prisma leaves it out)
    await ctx.tx.$disconnect()
  },
})
`
}

async function compile(provider: PrismaTestProvider): Promise<{ code: number; output: string }> {
  const entry = await prismaClientPath(provider)
  const dir = `${scratch}${provider}/`
  await mkdir(dir, { recursive: true })
  const client = `${relative(dir, dirname(entry)).replaceAll('\\', '/')}/${basename(entry)}`
  await writeFile(`${dir}handler.ts`, fixture(provider, client))
  await writeFile(
    `${dir}tsconfig.json`,
    JSON.stringify({
      extends: relative(dir, `${root}tsconfig.json`).replaceAll('\\', '/'),
      // The generated client imports its own files with .ts extensions.
      compilerOptions: { allowImportingTsExtensions: true, noEmit: true },
      include: ['handler.ts'],
      exclude: [],
    }),
  )
  try {
    const { stdout } = await run(process.execPath, [tsc, '-p', `${dir}tsconfig.json`], {
      cwd: root,
    })
    return { code: 0, output: stdout }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` }
  }
}

describe("ctx.tx's type on prismaStore", () => {
  for (const provider of ['postgresql', 'mysql'] as const) {
    it(`is the generated client's transaction client on ${provider}, with its models, and not any`, async () => {
      const { code, output } = await compile(provider)
      expect(output).toBe('')
      expect(code).toBe(0)
    }, 120_000)
  }
})
