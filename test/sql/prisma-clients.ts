/**
 * The Prisma clients of the SQL store tests, generated at test time from the
 * schemas beside this file into `prisma/generated/` (git-ignored): each app
 * generates its own client, and so do the tests. Generated once per schema
 * text; processes racing to generate it each write their own folder and the
 * first rename wins.
 *
 * `prisma generate` downloads Prisma's schema engine before it starts (from
 * binaries.prisma.sh, outside the npm registry; unreachable here) and never
 * runs it: PRISMA_SCHEMA_ENGINE_BINARY, when not set already, names a stand-in
 * that fails loudly if anything does run it.
 */
import { execFile } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { PrismaRawQueries } from '@affiliate-webhooks/prisma'

export type PrismaTestProvider = 'postgresql' | 'mysql'

/** A generated client as the tests use it (its models are typed only once generated). */
export interface PrismaClientFor<Tx> extends PrismaRawQueries {
  $transaction<R>(
    work: (tx: Tx) => Promise<R>,
    options?: { maxWait?: number; timeout?: number },
  ): Promise<R>
  $disconnect(): Promise<void>
}

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const run = promisify(execFile)

/** The path of the generated client's entry (`client.ts`) for a provider, generating it if needed. */
export async function prismaClientPath(provider: PrismaTestProvider): Promise<string> {
  const schema = await readFile(here(`./prisma/${provider}.prisma`), 'utf8')
  const version = createHash('sha256').update(schema).digest('hex').slice(0, 12)
  const folder = here(`./prisma/generated/${provider}-${version}`)
  await generatePrismaClient(schema, folder)
  return `${folder}/client.ts`
}

/**
 * Generates the client of a schema text into `folder` (its generator's `output`
 * replaced), unless a client is there already.
 */
export async function generatePrismaClient(schema: string, folder: string): Promise<void> {
  if (existsSync(`${folder}/client.ts`)) return
  const scratch = `${folder}.${randomUUID()}`
  await mkdir(scratch, { recursive: true })
  try {
    const copy = `${scratch}/schema.prisma`
    await writeFile(copy, schema.replace(/output\s*=\s*"[^"]*"/, 'output = "./client"'))
    const cli = createRequire(import.meta.url).resolve('prisma/build/index.js')
    await run(process.execPath, [cli, 'generate', '--schema', copy], {
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY:
          process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? here('./prisma/no-schema-engine.mjs'),
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
    })
    try {
      await rename(`${scratch}/client`, folder)
    } catch (error) {
      // Another process generated the same schema first: use its client.
      if (!existsSync(`${folder}/client.ts`)) throw error
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}
