/**
 * A replicated Redis that fails over, on loopback: a primary, one replica and
 * three Sentinels (`redis-server --sentinel`, quorum 2), each on a free port
 * with a directory of its own, every one killed and its directory removed by
 * `stop()`. Clients reach the primary through Sentinel (`sentinelOptions()`).
 *
 * A partition is made as it happens: the replica frozen (SIGSTOP) AND the
 * primary told to drop its replica connections (`CLIENT KILL TYPE replica`),
 * so the stream really stops (SIGSTOP alone loses nothing: the kernel buffers
 * the stream and the replica applies it on SIGCONT).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './redis-servers.js'

const run = promisify(execFile)
export const MASTER_NAME = 'awfailover'

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 3000 })
  return stdout.trim()
}

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface Node {
  port: number
  dir: string
  child?: ChildProcess | undefined
}

function launch(node: Node, args: string[]): void {
  node.child = spawn('redis-server', args, { stdio: 'ignore' })
}

async function kill(node: Node): Promise<void> {
  const child = node.child
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGCONT')
  child.kill('SIGKILL')
  await exited
}

const serverArgs = (node: Node, extra: string[] = []) => [
  '--port',
  String(node.port),
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
  '--dir',
  node.dir,
  // Redis 7 waits 5 s before a diskless full sync by default.
  '--repl-diskless-sync-delay',
  '0',
  ...extra,
]

async function newNode(): Promise<Node> {
  const port = await freePort()
  return { port, dir: mkdtempSync(join(tmpdir(), `redis-failover-${port}-`)) }
}

export interface RedisFailover {
  /** Where the primary is now (the replica's port after a promotion). */
  primaryPort(): number
  replicaPort(): number
  sentinels: { host: string; port: number }[]
  /** ioredis options that reach the primary through the Sentinels. */
  sentinelOptions(): { sentinels: { host: string; port: number }[]; name: string }
  /** Cut the replication link as a partition would: SIGSTOP + CLIENT KILL TYPE replica. */
  cutReplicaLink(): Promise<void>
  /** SIGKILL the primary, as a crash would. */
  killPrimary(): Promise<void>
  /** SIGCONT the frozen replica. */
  resumeReplica(): Promise<void>
  /** Wait until a quorum of Sentinels names the replica as the master; returns its port. */
  awaitPromotion(ms?: number): Promise<number>
  /**
   * Start the dead old primary again, empty, as a replica of the new one, and
   * wait until it is in sync (so `WAIT 1` can be acknowledged again).
   */
  rejoinOldPrimary(): Promise<void>
  stop(): Promise<void>
}

async function masterSeenBy(sentinel: number): Promise<number> {
  const reply = await cli(sentinel, 'sentinel', 'get-master-addr-by-name', MASTER_NAME)
  return Number(reply.split('\n')[1])
}

/** Primary, replica in sync, three Sentinels that see both and each other. */
export async function startRedisFailover(): Promise<RedisFailover> {
  let primary = await newNode()
  let replica = await newNode()
  const sentinelNodes = await Promise.all([0, 1, 2].map(() => newNode()))
  const nodes = [primary, replica, ...sentinelNodes]
  try {
    launch(primary, serverArgs(primary))
    await until(async () => (await cli(primary.port, 'ping')) === 'PONG', 'the primary')
    launch(replica, serverArgs(replica, ['--replicaof', '127.0.0.1', String(primary.port)]))
    await until(
      async () =>
        (await cli(replica.port, 'info', 'replication')).includes('master_link_status:up'),
      'the replica in sync',
    )
    for (const node of sentinelNodes) {
      const config = join(node.dir, 'sentinel.conf')
      writeFileSync(
        config,
        [
          `port ${node.port}`,
          'bind 127.0.0.1',
          `dir ${node.dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
          `sentinel failover-timeout ${MASTER_NAME} 4000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n'),
      )
      launch(node, [config, '--sentinel'])
    }
    await until(async () => {
      const views = await Promise.all(
        sentinelNodes.map((s) => cli(s.port, 'sentinel', 'master', MASTER_NAME)),
      )
      return views.every((v) => /num-slaves\n1\n/.test(v) && /num-other-sentinels\n2\n/.test(v))
    }, 'the Sentinels to see the replica and each other')
  } catch (error) {
    await Promise.all(nodes.map(kill))
    for (const node of nodes) rmSync(node.dir, { recursive: true, force: true })
    throw error
  }
  const sentinels = sentinelNodes.map((s) => ({ host: '127.0.0.1', port: s.port }))
  return {
    primaryPort: () => primary.port,
    replicaPort: () => replica.port,
    sentinels,
    sentinelOptions: () => ({ sentinels, name: MASTER_NAME }),
    async cutReplicaLink() {
      replica.child?.kill('SIGSTOP')
      await cli(primary.port, 'client', 'kill', 'type', 'replica')
    },
    killPrimary: () => kill(primary),
    async resumeReplica() {
      replica.child?.kill('SIGCONT')
    },
    async awaitPromotion(ms = 20_000) {
      const target = replica.port
      await until(
        async () => {
          const seen = await Promise.all(sentinelNodes.map((s) => masterSeenBy(s.port)))
          const role = await cli(target, 'role')
          return seen.filter((port) => port === target).length >= 2 && role.startsWith('master')
        },
        'Sentinel to promote the replica',
        ms,
      )
      ;[primary, replica] = [replica, primary]
      return target
    },
    async rejoinOldPrimary() {
      const old = replica
      launch(old, serverArgs(old, ['--replicaof', '127.0.0.1', String(primary.port)]))
      await until(
        async () => (await cli(old.port, 'info', 'replication')).includes('master_link_status:up'),
        'the old primary to sync as a replica',
      )
    },
    async stop() {
      await Promise.all(nodes.map(kill))
      for (const node of nodes) rmSync(node.dir, { recursive: true, force: true })
    },
  }
}

/**
 * The failover run's target for the Redis store (see failover-scenario.ts):
 * receivers reaching `failover` through Sentinel, with `replication` or without.
 * Its failover kills the primary, lets the frozen replica go, waits for
 * Sentinel's promotion, then brings the old primary back as the new one's
 * replica (without one, `WAIT 1` is never acknowledged again).
 */
export function redisFailoverTarget(
  failover: RedisFailover,
  replication?: { replicas: number; timeoutMs: number },
) {
  return {
    receiver: new URL('./failover-receiver.mjs', import.meta.url),
    env: {
      SENTINELS: JSON.stringify(failover.sentinels),
      MASTER_NAME,
      REPLICATION: replication ? JSON.stringify(replication) : '',
    },
    cut: () => failover.cutReplicaLink(),
    async failover() {
      await failover.killPrimary()
      await failover.resumeReplica()
      await failover.awaitPromotion()
      await failover.rejoinOldPrimary()
    },
  }
}
