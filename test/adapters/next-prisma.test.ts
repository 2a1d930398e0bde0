/**
 * examples/next-prisma for real: copied out of the repository as a user copies
 * it (a deep temporary folder), its packages installed by name from the run's
 * local registry with plain `npm install`, its migration applied to a database
 * of its own, `npm run build` (`prisma generate && next build`, offline where the
 * sandbox allows), `next start`, and signed deliveries to its App Router route.
 * Each conversion lands in the ledger through ctx.tx exactly once: a redelivery
 * is a duplicate, an older status arriving late is stale, a handler that fails
 * leaves no row and no mark (the retry then writes it). The app installs the
 * Postgres store, not the MySQL one.
 *
 * The migration is applied with SQL: `prisma migrate deploy` runs Prisma's schema
 * engine, a download this machine cannot make (see test/sql/prisma-clients.ts).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lockedVersion, npmInstall, pointAtRegistry, root, run } from '../stacks/copied-example.js'
import { SECRET, send } from '../support/conformance-cases.js'
import { createPostgresTestDatabase, type TestDatabase } from '../support/postgres-db.js'

const EXAMPLE = 'next-prisma'
const PINNED = [
  'next',
  'react',
  'react-dom',
  'prisma',
  '@prisma/client',
  '@prisma/adapter-pg',
  '@types/node',
  '@types/react',
  'typescript',
]
const NO_SCHEMA_ENGINE = join(root, 'test/sql/prisma/no-schema-engine.mjs')

const work = mkdtempSync(join(tmpdir(), 'aw-next-prisma-'))
const app = join(work, 'a', 'b', 'c', EXAMPLE)
const offline = spawnSync('unshare', ['-n', 'true']).status === 0

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const {
    AFFILIATE_WEBHOOK_SECRET: _secret,
    DATABASE_URL: _url,
    NODE_ENV: _env,
    ...rest
  } = process.env
  const clean: Record<string, string | undefined> = {
    ...rest,
    NEXT_TELEMETRY_DISABLED: '1',
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    // `prisma generate` fetches the schema engine before it starts, and never runs it.
    PRISMA_SCHEMA_ENGINE_BINARY: NO_SCHEMA_ENGINE,
    ...extra,
  }
  // NODE_ENV is left out (npm install would skip the devDependencies), which ProcessEnv requires.
  return clean as unknown as NodeJS.ProcessEnv
}

/** `next start` on a free port; resolves with its URL once it is ready. */
async function start(databaseUrl: string): Promise<{ server: ChildProcess; base: string }> {
  const nextBin = join(app, 'node_modules/next/dist/bin/next')
  const server = spawn(
    process.execPath,
    [nextBin, 'start', '--port', '0', '--hostname', '127.0.0.1'],
    {
      cwd: app,
      env: env({
        NODE_ENV: 'production',
        AFFILIATE_WEBHOOK_SECRET: SECRET,
        DATABASE_URL: databaseUrl,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let log = ''
  server.stderr?.on('data', (chunk) => {
    log += chunk
  })
  const base = await new Promise<string>((resolve, reject) => {
    let url: string | undefined
    const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => {
      log += `${line}\n`
      url ??= /Local:\s+(http:\/\/\S+)/.exec(line)?.[1]
      if (url !== undefined && /Ready/.test(line)) resolve(url)
    })
    server.once('exit', (code) => reject(new Error(`next start exited ${code}:\n${log}`)))
  })
  return { server, base }
}

let db: TestDatabase
let server: ChildProcess | undefined
let base = ''
let buildOutput = ''

beforeAll(async () => {
  db = await createPostgresTestDatabase()
  cpSync(join(root, 'examples', EXAMPLE), app, {
    recursive: true,
    filter: (source) => !/[\\/](\.next|node_modules|next-env\.d\.ts|generated)$/.test(source),
  })
  await pointAtRegistry(
    app,
    Object.fromEntries(PINNED.map((name) => [name, lockedVersion(EXAMPLE, name)])),
  )
  const seconds = await npmInstall(app, env())
  console.log(`Next + Prisma: examples/${EXAMPLE} copied out, npm install ${seconds.toFixed(1)} s`)
  const migration = readFileSync(join(app, 'prisma/migrations/0001_ledger/migration.sql'), 'utf8')
  await db.pool.query(migration)
  // No secret and no database at build time, as in many CI pipelines.
  buildOutput = await run(['npm', 'run', 'build'], app, env(), offline)
  ;({ server, base } = await start(db.url))
}, 300_000)

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = once(server, 'exit')
    server.kill('SIGTERM')
    await exited
  }
  rmSync(work, { recursive: true, force: true })
  await db?.drop()
})

const ledger = async (conversionId: number) =>
  (
    await db.pool.query(
      'SELECT conversion_id::text AS id, status, commission::text AS commission, currency, event_id FROM ledger WHERE conversion_id = $1',
      [conversionId],
    )
  ).rows

let nextId = 610_000 + Math.floor(Math.random() * 10_000)

describe(`examples/${EXAMPLE}: copied out, installed by name, built${offline ? ' offline' : ''}, run with next start`, () => {
  it('installs the Postgres store and not the MySQL one; the build generated the client', () => {
    expect(existsSync(join(app, 'node_modules/@affiliate-webhooks/postgres/package.json'))).toBe(
      true,
    )
    expect(existsSync(join(app, 'node_modules/@affiliate-webhooks/mysql'))).toBe(false)
    expect(existsSync(join(app, 'src/generated/prisma/client.ts'))).toBe(true)
    expect(buildOutput).toMatch(/Generated Prisma Client/)
  })

  it('writes each conversion to the ledger through ctx.tx once; a redelivery is a duplicate', async () => {
    const id = nextId++
    const event = buildConversionEvent({ conversion: { id, commission: '12.50', currency: 'EUR' } })
    expect(await send(`${base}/api/hooks`, event)).toMatchObject({
      status: 200,
      json: { outcome: 'processed' },
    })
    expect(await send(`${base}/api/hooks`, event, { attempt: 2 })).toMatchObject({
      status: 200,
      json: { outcome: 'duplicate' },
    })
    expect(await ledger(id)).toEqual([
      {
        id: String(id),
        status: 'pending',
        commission: '12.50',
        currency: 'EUR',
        event_id: event.id,
      },
    ])
    // The app's own read of what the handler wrote (the BigInt id back as a number).
    const rows = (await (await fetch(`${base}/api/ledger`)).json()) as { conversionId: number }[]
    expect(rows.some((row) => row.conversionId === id)).toBe(true)
  })

  it('keeps the newest status: an older event arriving late is stale and writes nothing', async () => {
    const id = nextId++
    const created = Date.now() - 3_600_000
    const approved = buildConversionEvent({
      type: 'conversion.updated',
      createdAt: created + 60_000,
      conversion: { id, status: 'approved', commission: null, currency: null },
    })
    const pending = buildConversionEvent({
      createdAt: created,
      conversion: { id, status: 'pending' },
    })
    expect((await send(`${base}/api/hooks`, approved)).json.outcome).toBe('processed')
    expect((await send(`${base}/api/hooks`, pending)).json.outcome).toBe('stale')
    expect(await ledger(id)).toEqual([
      {
        id: String(id),
        status: 'approved',
        commission: null,
        currency: null,
        event_id: approved.id,
      },
    ])
  })

  it('a handler that fails (the ledger refuses the row) leaves no row and no mark; the retry writes it', async () => {
    const id = nextId++
    // A commission the ledger's DECIMAL(12,2) cannot hold: the write fails inside the transaction.
    const tooLarge = buildConversionEvent({ conversion: { id, commission: '99999999999.00' } })
    const failed = await send(`${base}/api/hooks`, tooLarge)
    expect(failed.status).toBe(500)
    expect(failed.json).toMatchObject({ error: { code: 'handler_failed' } })
    expect(await ledger(id)).toEqual([])
    await db.pool.query('ALTER TABLE ledger ALTER COLUMN commission TYPE DECIMAL(14,2)')
    expect((await send(`${base}/api/hooks`, tooLarge, { attempt: 2 })).json.outcome).toBe(
      'processed',
    )
    expect((await ledger(id)).map((row) => row.commission)).toEqual(['99999999999.00'])
  })

  it('made its store tables beside the ledger, in the same database', async () => {
    const tables = await db.pool.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    )
    const names = tables.rows.map((row) => row.table_name as string)
    expect(names).toContain('ledger')
    expect(names).toEqual(expect.arrayContaining(['aw_events', 'aw_conversions']))
  })
})
