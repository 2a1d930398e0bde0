/**
 * The PostgreSQL store across a failover (issue 48), measured: per
 * configuration (asynchronous or synchronous standby; node-postgres behind a
 * TCP proxy that moves to the new primary, postgres.js with both hosts and
 * target_session_attrs=primary), two receiver processes (test/sql/sql-receiver.mjs)
 * take a stream of conversion lifecycles with duplicates and shuffles. A third
 * of it goes before the cut, a third with the link to the standby cut (the
 * standby frozen, its WAL sender ended), then the primary is killed (SIGKILL),
 * the standby promoted, the last third delivered against the new primary, and
 * every event delivered again until acknowledged (the service's retries, a
 * replay). Counted on the new primary: events acknowledged (2xx before the
 * final redelivery), acknowledged and never applied (missing once the stream
 * is over, and no newer event of the conversion applied either: the service
 * will not send it again), conversions whose newest event was acknowledged and
 * whose state is not it, applied twice (after the redelivery), 503s, the
 * longest answer. Each run is bounded; BENCH_RUNS runs
 * (default 2) per configuration. Figures to bench/results/failover-postgres.json
 * (failover-postgres-prisma.json with `-- prisma`).
 *
 *   npm run bench:failover:postgres
 */
import pg from 'pg'
import { type ReceiverProcess, startReceiver } from '../test/sql/sql-stores.js'
import {
  type MovableProxy,
  movableProxy,
  queryOnce,
  startReplicatedPostgres,
} from '../test/support/postgres-failover.js'
import { benchRuns, type Figures, failoverRun, named, resultsName } from './failover-sql.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 2)

interface Config {
  name: string
  synchronous: boolean
  store: 'postgres' | 'postgresjs' | 'prisma-postgres'
}

const ALL_CONFIGS: Config[] = [
  { name: 'PostgreSQL async, pg', synchronous: false, store: 'postgres' },
  { name: 'PostgreSQL async, postgres.js', synchronous: false, store: 'postgresjs' },
  { name: 'PostgreSQL sync, pg', synchronous: true, store: 'postgres' },
  { name: 'PostgreSQL sync, postgres.js', synchronous: true, store: 'postgresjs' },
  { name: 'PostgreSQL async, Prisma', synchronous: false, store: 'prisma-postgres' },
  { name: 'PostgreSQL sync, Prisma', synchronous: true, store: 'prisma-postgres' },
]

// `npm run bench:failover:postgres -- prisma` runs the configurations whose name has "prisma".
const CONFIGS = named(ALL_CONFIGS, process.argv[2])

const TABLES = [
  'CREATE TABLE effects (id bigserial PRIMARY KEY, event_id text NOT NULL, conversion_id bigint NOT NULL, event_order bigint NOT NULL, pid integer NOT NULL)',
  'CREATE TABLE conversion_state (conversion_id bigint PRIMARY KEY, status text NOT NULL, event_order bigint NOT NULL)',
]

async function oneRun(config: Config, run: number): Promise<Figures> {
  const replicated = await startReplicatedPostgres(config.synchronous)
  let proxy: MovableProxy | undefined
  const receivers: ReceiverProcess[] = []
  try {
    for (const statement of TABLES) await queryOnce(replicated.primary.url, statement)
    let url: string
    if (config.store !== 'postgresjs') {
      // node-postgres (and Prisma's pg adapter on it) takes one host: an address that moves.
      proxy = await movableProxy(replicated.primary.port)
      url = `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
    } else {
      url = `postgres://postgres@127.0.0.1:${replicated.primary.port},127.0.0.1:${replicated.standby.port}/postgres?target_session_attrs=primary`
    }
    for (let i = 0; i < 2; i++)
      receivers.push(await startReceiver({ STORE: config.store, DATABASE_URL: url }))
    return await failoverRun(run, {
      receivers,
      async cut(third, deliver) {
        await replicated.cutLink()
        await deliver(third)
      },
      async failOver() {
        replicated.killPrimary()
        await replicated.promote()
        proxy?.moveTo(replicated.standby.port)
      },
      queryNewPrimary: (sql) => queryOnce(replicated.standby.url, sql),
    })
  } finally {
    await Promise.all(receivers.map((r) => r.kill()))
    await proxy?.close()
    await replicated.destroy()
  }
}

pg.defaults.parseInt8 = false
await benchRuns(resultsName('failover-postgres', process.argv[2]), CONFIGS, RUNS, oneRun)
process.exit(0)
