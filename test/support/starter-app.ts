/**
 * What the starter-app tests of `init` share (test/adapters/*-init.test.ts): the
 * environment a user's shell gives the app's tools, the step timer whose line
 * fills the closing note's table, the built app served as its framework says
 * (spawned, then polled over HTTP until it answers), and the first verified
 * event: the emulator, an endpoint, `trigger --wait`, the conversion processed,
 * then the same delivery replayed and answered as a duplicate, with
 * `onConversion`'s log line printed once.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect } from 'vitest'
import { stopGroup } from '../stacks/copied-example.js'
import { killLive, startLoop } from './cli-live.js'
import { freePort } from './redis-servers.js'

/** This process's environment as a user's shell has it: no secret, no NODE_ENV, no telemetry. */
export function starterEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { AFFILIATE_WEBHOOK_SECRET: _s, NODE_ENV: _n, ...rest } = process.env
  return {
    ...rest,
    ASTRO_TELEMETRY_DISABLED: '1',
    NUXT_TELEMETRY_DISABLED: '1',
    NEXT_TELEMETRY_DISABLED: '1',
    DO_NOT_TRACK: '1',
    ...extra,
  } as unknown as NodeJS.ProcessEnv
}

/** Times each step and prints them on one line, for the closing note's table. */
export function stepTimer() {
  const times: [string, number][] = []
  return {
    async step<T>(name: string, work: () => Promise<T>): Promise<T> {
      const started = performance.now()
      try {
        return await work()
      } finally {
        times.push([name, (performance.now() - started) / 1000])
      }
    },
    line(title: string): string {
      const total = times.reduce((sum, [, seconds]) => sum + seconds, 0)
      const steps = times.map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`).join(', ')
      return `${title}: ${steps}; total ${total.toFixed(1)} s`
    },
  }
}

/** A built app serving in its own process group. */
export interface ServedApp {
  child: ChildProcess
  /** Everything it printed so far, stdout and stderr. */
  log(): string
  stop(): Promise<void>
}

/**
 * Starts `argv` in `cwd` in a process group of its own and resolves once
 * `base` answers HTTP (any status); rejects with its output if it exits first.
 */
export async function serveApp(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  base: string,
): Promise<ServedApp> {
  const [command, ...args] = argv
  const child = spawn(command as string, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let log = ''
  child.stdout?.on('data', (chunk) => {
    log += chunk
  })
  child.stderr?.on('data', (chunk) => {
    log += chunk
  })
  const served: ServedApp = { child, log: () => log, stop: () => stopGroup(child) }
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${argv.join(' ')} exited ${code} before answering:\n${log.slice(-4000)}`)
  })
  const deadline = Date.now() + 60_000
  const answers = async (): Promise<void> => {
    while (Date.now() < deadline) {
      try {
        await (await fetch(base, { signal: AbortSignal.timeout(2_000) })).arrayBuffer()
        return
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    throw new Error(`${argv.join(' ')} did not answer within 60 s:\n${log.slice(-4000)}`)
  }
  try {
    await Promise.race([answers(), exited])
  } catch (error) {
    await served.stop()
    throw error
  }
  exited.catch(() => undefined)
  return served
}

interface Delivery {
  id: string
  status: string
  attemptsTotal: number
  replays: number
  responseBody: string | null
}

/**
 * The emulator, an endpoint at `path` on a free port, the app started by
 * `serve` with that port and the endpoint's secret, then `trigger --wait`: the
 * conversion is processed; the delivery replayed is a duplicate; the app printed
 * `onConversion`'s line for it once. Resolves with the started app.
 */
export async function conversionHandledOnce(
  path: string,
  serve: (env: Record<string, string>, base: string) => Promise<ServedApp>,
  /** How often the conversion was handled; default: onConversion's log lines (a SQL store's module logs none: count its rows). */
  handledCount?: (conversionId: string, app: ServedApp) => Promise<number>,
): Promise<ServedApp> {
  const { cli } = await startLoop()
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const made = await cli('endpoints', 'create', '--url', `${base}${path}`, '--show-secret')
  expect(made.code, made.stderr).toBe(0)
  const secret = /^export AFFILIATE_WEBHOOK_SECRET=(whsec_\S+)$/m.exec(made.stdout)?.[1] as string
  const endpoint = /^id\s+(wh_\S+)$/m.exec(made.stdout)?.[1] as string
  const app = await serve(
    { PORT: String(port), HOST: '127.0.0.1', AFFILIATE_WEBHOOK_SECRET: secret },
    base,
  )
  const conversionId = String(100_000 + Math.floor(Math.random() * 800_000))
  const triggered = await cli(
    'trigger',
    'conversion.created',
    '--conversion-id',
    conversionId,
    '--commission',
    '4.20',
    '--currency',
    'EUR',
    '--wait',
    '--json',
  )
  expect(triggered.code, `${triggered.stdout}${triggered.stderr}\n${app.log()}`).toBe(0)
  const lines = triggered.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  const attempts = lines.filter((line) => line.type === 'attempt')
  expect(attempts.map((a) => [a.responseStatus, a.outcome])).toEqual([[200, 'processed']])
  const handled = new RegExp(`^conversion ${conversionId}: pending \\(evt_\\w+\\)$`, 'gm')
  const count = handledCount ?? (async () => app.log().match(handled)?.length ?? 0)
  await expect.poll(() => count(conversionId, app)).toBe(1)

  const deliveryId = attempts[0].deliveryId as string
  const replayed = await cli('replay', endpoint, deliveryId, '--json')
  expect(replayed.code, replayed.stderr).toBe(0)
  const second = async (): Promise<Delivery | undefined> => {
    const listed = await cli('deliveries', endpoint, '--json')
    const all = JSON.parse(listed.stdout) as Delivery[]
    const delivery = all.find((d) => d.id === deliveryId)
    return delivery?.attemptsTotal === 2 && delivery.status === 'succeeded' ? delivery : undefined
  }
  await expect.poll(second, { timeout: 20_000, interval: 200 }).toBeDefined()
  expect(JSON.parse((await second())?.responseBody ?? 'null')).toEqual({
    received: true,
    outcome: 'duplicate',
  })
  expect(await count(conversionId, app)).toBe(1)
  return app
}

/**
 * The starter test's folder (a new `aw-<name>-init-` folder in tmp, the app in its `shop`) and the app it
 * serves, stopped with the emulator and the folder removed after the file.
 */
export function starterWorkspace(name: string): {
  app: string
  work: string
  served: { app?: ServedApp }
} {
  const work = mkdtempSync(join(tmpdir(), `aw-${name}-init-`))
  const served: { app?: ServedApp } = {}
  afterAll(async () => {
    await served.app?.stop()
    killLive()
    rmSync(work, { recursive: true, force: true })
  })
  return { app: join(work, 'shop'), work, served }
}
