/**
 * The MySQL store (mysql2) across a MariaDB failover (issue 59), measured as
 * bench/failover-postgres.ts measures the PostgreSQL store: per configuration
 * (an asynchronous replica; a semi-synchronous one, the primary's
 * rpl_semi_sync_master_timeout at MariaDB's default 10 s and its wait point
 * AFTER_SYNC), two receiver processes (test/sql/sql-receiver.mjs) reach the
 * primary through a TCP proxy that moves to the new primary (a virtual IP),
 * and take a stream of conversion lifecycles with duplicates and shuffles. A
 * third of it goes before the cut; a third with the link to the replica cut
 * (the replica frozen, its binlog dump thread killed on the primary; with
 * semi-sync, the first half of that third goes with the replica frozen but
 * still connected, each commit waiting for its acknowledgement, and the link
 * is cut for the second half); then the primary is killed (SIGKILL), the
 * replica promoted (its relay log applied first), the proxy moved, the last
 * third delivered against the new primary, and every event delivered again
 * until acknowledged (the service's retries, a replay). Counted on the new
 * primary as the PostgreSQL bench counts. Each run is bounded; BENCH_RUNS runs
 * (default 3) per configuration. Figures to bench/results/failover-mysql.json
 * (failover-mysql-prisma.json with `-- prisma`);
 * each run's answers, and the ids lost and applied twice, to BENCH_LOG_DIR
 * (default failover-mysql in the system's temporary folder).
 *
 *   npm run bench:failover:mysql
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MYSQL_TABLES, type ReceiverProcess, startReceiver } from '../test/sql/sql-stores.js'
import { mysqlOnce, startReplicatedMariadb } from '../test/support/mariadb-failover.js'
import { movableProxy } from '../test/support/postgres-failover.js'
import { benchRuns, type Figures, failoverRun, named, resultsName } from './failover-sql.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const LOG_DIR = process.env.BENCH_LOG_DIR ?? join(tmpdir(), 'failover-mysql')

interface Config {
  name: string
  semiSync: boolean
  /** The receivers' store (test/sql/sql-receiver.mjs's STORE). */
  store: 'mysql' | 'prisma-mysql'
}

const ALL_CONFIGS: Config[] = [
  { name: 'MariaDB async', semiSync: false, store: 'mysql' },
  { name: 'MariaDB semi-sync (10 s, AFTER_SYNC)', semiSync: true, store: 'mysql' },
  { name: 'MariaDB async, Prisma', semiSync: false, store: 'prisma-mysql' },
  { name: 'MariaDB semi-sync (10 s, AFTER_SYNC), Prisma', semiSync: true, store: 'prisma-mysql' },
]

// `npm run bench:failover:mysql -- prisma` runs the configurations whose name has "prisma".
const CONFIGS = named(ALL_CONFIGS, process.argv[2])

async function oneRun(config: Config, run: number): Promise<Figures> {
  const replicated = await startReplicatedMariadb({ semiSync: config.semiSync })
  const proxy = await movableProxy(replicated.primary.port)
  const receivers: ReceiverProcess[] = []
  try {
    for (const statement of MYSQL_TABLES) await mysqlOnce(replicated.primary.url, statement)
    const url = `mysql://root@127.0.0.1:${proxy.port}/aw`
    for (let i = 0; i < 2; i++)
      receivers.push(await startReceiver({ STORE: config.store, DATABASE_URL: url }))
    const result = await failoverRun(run, {
      receivers,
      async cut(third, deliver) {
        if (config.semiSync) {
          // Connected and acknowledging nothing: each commit waits for the replica.
          const half = Math.ceil(third.length / 2)
          await replicated.replica.freeze()
          await deliver(third.slice(0, half), 'cut, replica frozen')
          await replicated.cutLink()
          await deliver(third.slice(half), 'cut, link cut')
        } else {
          await replicated.cutLink()
          await deliver(third)
        }
      },
      async failOver() {
        await replicated.killPrimary()
        await replicated.promote()
        proxy.moveTo(replicated.replica.port)
      },
      queryNewPrimary: (sql) => mysqlOnce(replicated.replica.url, sql),
    })
    mkdirSync(LOG_DIR, { recursive: true })
    const file = join(
      LOG_DIR,
      `${config.store}-${config.semiSync ? 'semi-sync' : 'async'}-run${run + 1}.json`,
    )
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`)
    if (result.lost.length > 0 || result.twice.length > 0)
      console.log(`${config.name} run ${run + 1}: lost or applied twice, see ${file}`)
    return result
  } finally {
    await Promise.all(receivers.map((r) => r.kill()))
    await proxy.close()
    await replicated.destroy()
  }
}

await benchRuns(resultsName('failover-mysql', process.argv[2]), CONFIGS, RUNS, oneRun)
process.exit(0)
