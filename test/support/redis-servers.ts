/**
 * Private redis-server processes for tests that need their own Redis: a Cluster,
 * or one to kill and restart. Each runs on a free loopback port in a temp dir.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function ping(port: number): Promise<boolean> {
  try {
    const { stdout } = await run('redis-cli', ['-p', String(port), 'ping'])
    return stdout.trim() === 'PONG'
  } catch {
    return false
  }
}

async function until(check: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface RedisServer {
  port: number
  url: string
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>
  /** Start again on the same port and directory. */
  restart(): Promise<void>
  stop(): Promise<void>
}

export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), `redis-${port}-`))
  let child: ChildProcess | undefined
  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...extraArgs],
      { stdio: 'ignore' },
    )
    await until(() => ping(port), `redis-server on ${port}`)
  }
  const kill = async () => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
  await launch()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    restart: launch,
    async stop() {
      await kill()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface RedisCluster {
  nodes: { host: string; port: number }[]
  stop(): Promise<void>
}

/** Three masters, no replicas, made with `redis-cli --cluster create`. */
export async function startCluster(): Promise<RedisCluster> {
  const servers = await Promise.all(
    [0, 1, 2].map(() =>
      startRedis([
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '2000',
      ]),
    ),
  )
  const addresses = servers.map((s) => `127.0.0.1:${s.port}`)
  await run('redis-cli', [
    '--cluster',
    'create',
    ...addresses,
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ])
  await until(async () => {
    const states = await Promise.all(
      servers.map((s) =>
        run('redis-cli', ['-p', String(s.port), 'cluster', 'info']).then((r) => r.stdout),
      ),
    )
    return states.every((info) => info.includes('cluster_state:ok'))
  }, 'cluster_state:ok')
  return {
    nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()))
    },
  }
}
