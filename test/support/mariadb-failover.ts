/**
 * MariaDB failover for tests and the failover bench (issue 59): a private
 * primary with its binary log and a GTID replica of it, asynchronous or
 * semi-synchronous (`rpl_semi_sync_master_enabled` on the primary,
 * `rpl_semi_sync_slave_enabled` on the replica); the link between them cut as
 * a partition would cut it (the replica frozen AND its binlog dump thread
 * killed on the primary: the kernel would buffer the stream otherwise); the
 * primary crashed (SIGKILL); the replica woken and promoted (replication
 * stopped, the relay log applied first, read_only off). The proxy that moves
 * to the new primary is the one of the PostgreSQL harness. Loopback only.
 */
import mysql from 'mysql2/promise'
import { type PrivateMariadb, startPrivateMariadb } from './mysql-db.js'
import { until } from './postgres-failover.js'

/** The replica's settings in the primary's semi-sync mode; `timeoutMs` the primary's `rpl_semi_sync_master_timeout`. */
export interface ReplicationMode {
  semiSync: boolean
  /** The primary's wait for an acknowledgement before it falls back to asynchronous (MariaDB's default 10 s). */
  timeoutMs?: number
  /** `AFTER_SYNC` (what keeps the promise) or MariaDB's default `AFTER_COMMIT`. */
  waitPoint?: 'AFTER_SYNC' | 'AFTER_COMMIT'
}

export interface ReplicatedMariadb {
  primary: PrivateMariadb
  replica: PrivateMariadb
  /** Freezes the replica and kills its binlog dump thread on the primary: nothing more reaches it. */
  cutLink(): Promise<void>
  /** Thaws the replica and lets it connect again (after cutLink, without a failover). */
  heal(): Promise<void>
  /** SIGKILL to the primary: as a crash. */
  killPrimary(): Promise<void>
  /** Wakes the replica, applies what it received, stops replication and makes it writable. */
  promote(): Promise<void>
  destroy(): Promise<void>
}

/** Runs `sql` on a fresh connection to `url` (closed after). */
export async function mysqlOnce<Row>(url: string, sql: string, values: unknown[] = []) {
  const connection = await mysql.createConnection({ uri: url, connectTimeout: 3000 })
  try {
    return (await connection.query(sql, values))[0] as Row[]
  } finally {
    await connection.end().catch(() => connection.destroy())
  }
}

/** The server's status variable `name`, as text. */
export async function statusOf(url: string, name: string): Promise<string | undefined> {
  const rows = await mysqlOnce<{ Value: string }>(url, 'SHOW GLOBAL STATUS LIKE ?', [name])
  return rows[0]?.Value
}

/** The primary's binlog dump threads (one per replica streaming from it). */
const DUMP_THREADS =
  "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"

/**
 * A private primary and a replica of it. With `semiSync`, resolves once the
 * primary's `Rpl_semi_sync_master_status` is ON with the replica as its client.
 */
export async function startReplicatedMariadb(mode: ReplicationMode): Promise<ReplicatedMariadb> {
  const semi = mode.semiSync
  const primary = await startPrivateMariadb([
    '--log-bin=primary-bin',
    '--server-id=1',
    '--binlog-format=ROW',
    ...(semi
      ? [
          '--rpl-semi-sync-master-enabled=ON',
          `--rpl-semi-sync-master-timeout=${mode.timeoutMs ?? 10_000}`,
          `--rpl-semi-sync-master-wait-point=${mode.waitPoint ?? 'AFTER_SYNC'}`,
        ]
      : []),
  ])
  let replica: PrivateMariadb
  try {
    replica = await startPrivateMariadb([
      '--log-bin=replica-bin',
      '--server-id=2',
      '--binlog-format=ROW',
      '--log-slave-updates',
      ...(semi ? ['--rpl-semi-sync-slave-enabled=ON'] : []),
    ])
  } catch (error) {
    await primary.dispose()
    throw error
  }
  try {
    // The replica's own `aw` database came from its start: its binlog starts anew, empty.
    await mysqlOnce(replica.url, 'RESET MASTER')
    await mysqlOnce(
      replica.url,
      `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${primary.port}, MASTER_USER = 'root', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1`,
    )
    await mysqlOnce(replica.url, 'START SLAVE')
    await until('the replica did not stream', 20_000, async () => {
      const rows = await mysqlOnce(primary.url, DUMP_THREADS)
      return rows.length > 0
    })
    if (semi) {
      await until('semi-sync did not turn on', 20_000, async () => {
        // A write makes the primary see the replica's acknowledgement and switch on.
        await mysqlOnce(primary.url, 'CREATE DATABASE IF NOT EXISTS aw_semi_sync_probe')
        return (
          (await statusOf(primary.url, 'Rpl_semi_sync_master_status')) === 'ON' &&
          (await statusOf(primary.url, 'Rpl_semi_sync_master_clients')) !== '0'
        )
      })
    }
  } catch (error) {
    await Promise.all([replica.dispose(), primary.dispose()])
    throw error
  }
  return harness(primary, replica)
}

function harness(primary: PrivateMariadb, replica: PrivateMariadb): ReplicatedMariadb {
  return {
    primary,
    replica,
    async cutLink() {
      await replica.freeze()
      for (const { id } of await mysqlOnce<{ id: number }>(primary.url, DUMP_THREADS)) {
        await mysqlOnce(primary.url, `KILL ${Number(id)}`).catch(() => {})
      }
      await until('the binlog dump thread did not end', 5000, async () => {
        const rows = await mysqlOnce(primary.url, DUMP_THREADS)
        return rows.length === 0
      })
    },
    async heal() {
      await replica.thaw()
      await until('the replica did not stream again', 20_000, async () => {
        const rows = await mysqlOnce(primary.url, DUMP_THREADS)
        return rows.length > 0
      })
    },
    async killPrimary() {
      await primary.kill()
    },
    async promote() {
      await replica.thaw()
      // What it received and has not applied yet is applied before it takes writes.
      await mysqlOnce(replica.url, 'STOP SLAVE IO_THREAD')
      const status = await mysqlOnce<{ Gtid_IO_Pos?: string }>(replica.url, 'SHOW SLAVE STATUS')
      const received = status[0]?.Gtid_IO_Pos ?? ''
      const [waited] = await mysqlOnce<{ r: number | null }>(
        replica.url,
        'SELECT MASTER_GTID_WAIT(?, 15) AS r',
        [received],
      )
      if (Number(waited?.r) !== 0)
        throw new Error('the replica did not apply its relay log in 15 s')
      await mysqlOnce(replica.url, 'STOP SLAVE')
      await mysqlOnce(replica.url, 'RESET SLAVE ALL')
      await mysqlOnce(replica.url, 'SET GLOBAL read_only = OFF')
    },
    async destroy() {
      await Promise.all([replica.dispose(), primary.dispose()])
    },
  }
}
