/**
 * PostgreSQL failover for tests and the failover bench (issue 48): a private
 * primary and a streaming standby, asynchronous or synchronous; the link
 * between them cut as a partition would cut it (the standby frozen AND its WAL
 * sender ended on the primary: SIGSTOP alone loses nothing, the kernel buffers
 * the stream); the primary crashed (SIGKILL to the postmaster and every
 * process it started); the standby woken and promoted; a TCP proxy whose
 * target moves (a virtual IP, a PgBouncer). Loopback only.
 */
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import {
  asPostgres,
  PG_BIN,
  type PostgresServer,
  startPrivatePostgres,
  startPrivateStandby,
} from './postgres-db.js'

const STANDBY = 'standby1'

export interface ReplicatedPostgres {
  primary: PostgresServer
  standby: PostgresServer
  synchronous: boolean
  /** Freezes the standby and ends its WAL sender on the primary: nothing more reaches it. */
  cutLink(): Promise<void>
  /** SIGKILL to the primary's postmaster and every process it started: as a crash. */
  killPrimary(): void
  /** Wakes the standby, promotes it, and resolves once it takes writes. */
  promote(): Promise<void>
  destroy(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `text` on a fresh connection to `url` (closed after). */
export async function queryOnce<Row extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query<Row>(text, values)).rows
  } finally {
    await client.end().catch(() => {})
  }
}

/** Polls `check` every 100 ms until it is true, or throws `what` after `ms`. */
export async function until(
  what: string,
  ms: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`)
    await sleep(100)
  }
}

/** The postmaster's pid and its children's, from the data folder's postmaster.pid and /proc. */
function serverPids(server: PostgresServer): number[] {
  const postmaster = Number(
    readFileSync(join(server.data, 'postmaster.pid'), 'utf8').split('\n')[0],
  )
  const pids = [postmaster]
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster)
        pids.push(Number(entry))
    } catch {
      // Ended between the listing and the read.
    }
  }
  return pids
}

/**
 * A private primary and a standby streaming from it. `synchronous`: the
 * primary names the standby in synchronous_standby_names (synchronous_commit
 * stays `on`), and this resolves once pg_stat_replication shows it `sync`.
 */
export async function startReplicatedPostgres(synchronous: boolean): Promise<ReplicatedPostgres> {
  const primary = await startPrivatePostgres()
  let standby: PostgresServer
  try {
    standby = await startPrivateStandby(primary, STANDBY)
    if (synchronous) {
      await queryOnce(primary.url, `ALTER SYSTEM SET synchronous_standby_names = '${STANDBY}'`)
      await queryOnce(primary.url, 'SELECT pg_reload_conf()')
      await until('the standby is not synchronous', 10_000, async () => {
        const rows = await queryOnce(
          primary.url,
          "SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND sync_state = 'sync'",
          [STANDBY],
        )
        return rows.length > 0
      })
    }
  } catch (error) {
    await primary.destroy()
    throw error
  }
  const pidsOfStandby = serverPids(standby)
  return {
    primary,
    standby,
    synchronous,
    async cutLink() {
      standby.freeze(true)
      await queryOnce(
        primary.url,
        'SELECT pg_terminate_backend(pid) FROM pg_stat_replication WHERE application_name = $1',
        [STANDBY],
      )
      await until('the WAL sender did not end', 5000, async () => {
        const rows = await queryOnce(
          primary.url,
          'SELECT 1 FROM pg_stat_replication WHERE application_name = $1',
          [STANDBY],
        )
        return rows.length === 0
      })
    },
    killPrimary() {
      for (const pid of serverPids(primary)) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // Ended already.
        }
      }
    },
    async promote() {
      // The standby's processes as they were when it started, and any since.
      for (const pid of new Set([...pidsOfStandby, ...serverPids(standby)])) {
        try {
          process.kill(pid, 'SIGCONT')
        } catch {
          // Ended already.
        }
      }
      await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', standby.data, '-w', 'promote'])
      await until('the promoted standby takes no writes', 15_000, async () => {
        const rows = await queryOnce<{ r: boolean }>(standby.url, 'SELECT pg_is_in_recovery() AS r')
        if (rows[0]?.r !== false) return false
        await queryOnce(standby.url, 'CREATE TEMP TABLE promoted_check (x int)')
        return true
      })
    },
    async destroy() {
      await Promise.all([standby.destroy(), primary.destroy()])
    },
  }
}

export interface MovableProxy {
  /** The port the app connects to (a virtual IP, a PgBouncer, in its place). */
  port: number
  /** Sends new connections to `port` from now on and breaks the ones open, as a moved address would. */
  moveTo(port: number): void
  close(): Promise<void>
}

/** A TCP proxy on loopback to `target`, whose target can move: a host that moves to the new primary. */
export async function movableProxy(target: number): Promise<MovableProxy> {
  let to = target
  const open = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(to, '127.0.0.1')
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.on('close', () => open.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    port: (server.address() as AddressInfo).port,
    moveTo(port) {
      to = port
      for (const socket of open) socket.destroy()
    },
    async close() {
      for (const socket of open) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
