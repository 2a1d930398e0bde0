/**
 * Issue 48: the PostgreSQL stores (pg, postgres.js, Prisma) say once at start
 * when they run on a primary whose standbys are asynchronous, and nothing on a
 * standalone server, with synchronous standbys, or when their role cannot see
 * the standbys' state. The decision is a pure function; a private primary and
 * a streaming standby (pg_basebackup -R) show the line said, or not said.
 */
import type { Logger } from '@affiliate-webhooks/core'
import type { DatabaseEventStore } from '@affiliate-webhooks/core/internal'
import { postgresStore } from '@affiliate-webhooks/postgres'
import { type ReplicationFacts, replicationRisk } from '@affiliate-webhooks/postgres/internal'
import { type PrismaRawQueries, prismaStore } from '@affiliate-webhooks/prisma'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type PostgresServer,
  startPrivatePostgres,
  startPrivateStandby,
} from '../support/postgres-db.js'
import { type PrismaClientFor, prismaClientPath } from './prisma-clients.js'

const facts = (overrides: Partial<ReplicationFacts>): ReplicationFacts => ({
  inRecovery: false,
  synchronousCommit: 'on',
  synchronousStandbyNames: '',
  standbys: [],
  ...overrides,
})

describe('replicationRisk', () => {
  it('a primary with an async standby and nothing waiting is lossy', () => {
    const standbys = [{ name: 'standby1', state: 'async' }]
    expect(replicationRisk(facts({ standbys }))).toEqual({
      verdict: 'lossy',
      standbys,
      synchronousCommit: 'on',
      synchronousStandbyNames: '',
    })
    // A standby that would become synchronous only if another failed is async now.
    expect(replicationRisk(facts({ standbys: [{ name: 'b', state: 'potential' }] })).verdict).toBe(
      'lossy',
    )
  })

  it('a sync or quorum standby with synchronous_commit on, remote_write or remote_apply is synchronous', () => {
    for (const state of ['sync', 'quorum']) {
      for (const synchronousCommit of ['on', 'remote_write', 'remote_apply']) {
        const standbys = [
          { name: 'a', state },
          { name: 'b', state: 'async' },
        ]
        expect(replicationRisk(facts({ standbys, synchronousCommit }))).toEqual({
          verdict: 'synchronous',
        })
      }
    }
  })

  it('synchronous_commit off or local waits for no standby, sync or not', () => {
    for (const synchronousCommit of ['off', 'local']) {
      const standbys = [{ name: 'a', state: 'sync' }]
      expect(replicationRisk(facts({ standbys, synchronousCommit })).verdict).toBe('lossy')
    }
  })

  it('says standalone without standbys, unknown when the role sees nulls or the server is a standby', () => {
    expect(replicationRisk(facts({}))).toEqual({ verdict: 'standalone' })
    expect(replicationRisk(facts({ standbys: [{ name: 'a', state: null }] }))).toEqual({
      verdict: 'unknown',
    })
    const standbys = [{ name: 'a', state: 'async' }]
    expect(replicationRisk(facts({ standbys, inRecovery: true }))).toEqual({ verdict: 'unknown' })
  })
})

const lossy = (caller: string) =>
  `${caller}: the database is a primary whose standbys are asynchronous (standbys: standby1 async; synchronous_standby_names = ''; synchronous_commit = on): a commit returns before any standby has it, so a failover can lose conversions the receiver already acknowledged, the handler's effects and the store's mark together, and the service will not send them again. On the primary, set synchronous_standby_names (for example 'ANY 1 (standby1)') and synchronous_commit = on or remote_apply.`

const COMMIT_LOCAL =
  "postgresStore: the database is a primary whose commits do not wait for its standbys (standbys: standby1 sync; synchronous_standby_names = '*'; synchronous_commit = local): a commit returns before any standby has it, so a failover can lose conversions the receiver already acknowledged, the handler's effects and the store's mark together, and the service will not send them again. On the primary, set synchronous_standby_names to name a standby that streams and synchronous_commit = on or remote_apply."

function recorder() {
  const warnings: string[] = []
  const logger: Logger = { warn: (line) => warnings.push(line), error: () => {} }
  return { logger, warnings }
}

type Kind = 'pg' | 'postgres.js' | 'prisma'
type Client = PrismaClientFor<PrismaRawQueries>
let PrismaClient: new (options: { adapter: PrismaPg }) => Client

/** A store of `kind` on `url`, made ready (twice, and a peek: still one check), then closed: what it warned. */
async function warningsOf(kind: Kind, url: string, options: string | undefined = undefined) {
  const { logger, warnings } = recorder()
  let store: Pick<DatabaseEventStore<unknown>, 'ready' | 'peek' | 'close'>
  if (kind === 'pg') {
    store = postgresStore({ pool: new pg.Pool({ connectionString: url, options }), logger })
  } else if (kind === 'postgres.js') {
    store = postgresStore({ sql: postgres(url, { max: 2, onnotice: () => {} }), logger })
  } else {
    store = prismaStore({
      prisma: new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 2 }) }),
      logger,
    })
  }
  try {
    await store.ready()
    await store.ready()
    await store.peek({ eventId: 'evt_failover', order: 1 })
  } finally {
    await store.close()
  }
  return warnings
}

const KINDS: Kind[] = ['pg', 'postgres.js', 'prisma']
const callerOf = (kind: Kind) => (kind === 'prisma' ? 'prismaStore' : 'postgresStore')

describe('the PostgreSQL stores on a primary and its standby', { timeout: 90_000 }, () => {
  let primary: PostgresServer
  let standby: PostgresServer | undefined
  let admin: pg.Client

  beforeAll(async () => {
    ;({ PrismaClient } = await import(await prismaClientPath('postgresql')))
    primary = await startPrivatePostgres()
    admin = new pg.Client({ connectionString: primary.url })
    await admin.connect()
  }, 90_000)
  afterAll(async () => {
    await admin?.end()
    await standby?.destroy()
    await primary?.destroy()
  })

  it('standalone: says nothing', async () => {
    for (const kind of KINDS) expect(await warningsOf(kind, primary.url)).toEqual([])
  })

  it('with an asynchronous standby: one warning per store, with the fix', async () => {
    standby = await startPrivateStandby(primary, 'standby1')
    for (const kind of KINDS) {
      expect(await warningsOf(kind, primary.url)).toEqual([lossy(callerOf(kind))])
    }
  })

  it('a role that cannot see the standbys (no pg_monitor): says nothing', async () => {
    await admin.query('CREATE ROLE aw_app LOGIN')
    // A database of its own, where it may create the store's tables.
    await admin.query('CREATE DATABASE aw_app OWNER aw_app')
    const url = primary.url.replace('postgres@', 'aw_app@').replace(/\/postgres$/, '/aw_app')
    const app = new pg.Client({ connectionString: url })
    await app.connect()
    try {
      // What makes it "cannot tell": the row is there, its state hidden.
      const { rows } = await app.query(
        'SELECT application_name, sync_state FROM pg_stat_replication',
      )
      expect(rows).toEqual([{ application_name: 'standby1', sync_state: null }])
    } finally {
      await app.end()
    }
    expect(await warningsOf('pg', url)).toEqual([])
  })

  it('synchronous_standby_names set and reloaded: says nothing; synchronous_commit = local: warns', async () => {
    await admin.query("ALTER SYSTEM SET synchronous_standby_names = '*'")
    await admin.query('SELECT pg_reload_conf()')
    const deadline = Date.now() + 15_000
    for (;;) {
      const { rows } = await admin.query('SELECT sync_state FROM pg_stat_replication')
      if (rows[0]?.sync_state === 'sync') break
      if (Date.now() > deadline) throw new Error('the standby did not become synchronous')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    for (const kind of KINDS) expect(await warningsOf(kind, primary.url)).toEqual([])
    // This session's commits do not wait, whatever the server's standbys.
    expect(await warningsOf('pg', primary.url, '-c synchronous_commit=local')).toEqual([
      COMMIT_LOCAL,
    ])
  })
})
