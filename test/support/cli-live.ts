/** The built CLI as long-running processes (the emulator, a follower), for the CLI tests. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { run } from './run-process.js'

const root = new URL('../..', import.meta.url).pathname
export const CLI = join(root, 'packages/cli/dist/cli.js')
const BIN = CLI

export interface Live {
  child: ChildProcessWithoutNullStreams
  stdout: () => string
  stderr: () => string
  /** Resolves once stdout matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  /** SIGINT, then the exit code. */
  stop(): Promise<number | null>
}

const children: ChildProcessWithoutNullStreams[] = []
/** Kills every process `live` started that is still running (for afterEach). */
export function killLive(): void {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
}

/** A long-running CLI process (the emulator, a follower). */
export function live(args: string[], env: Record<string, string> = {}): Live {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text
  })
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text
  })
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const match = pattern.exec(stdout)
        if (match) return match
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`no ${pattern} in stdout:\n${stdout}\nstderr:\n${stderr}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode
      const exited = once(child, 'exit')
      child.kill('SIGINT')
      const [code] = await exited
      return code as number | null
    },
  }
}

/** The emulator as users start it, and the environment its banner says to export. */
export async function startLoop(extra: string[] = []) {
  // 600x: the service's minute batches every 100 ms, the first retry 100 ms later.
  const emulator = live(['emulator', '--port', '0', '--time-scale', '600', ...extra])
  await emulator.waitFor(/Ctrl-C stops it\./)
  const env: Record<string, string> = {}
  for (const [, name, value] of emulator.stdout().matchAll(/^export (\w+)=(\S+)$/gm)) {
    env[name as string] = value as string
  }
  const cli = (...args: string[]) => run(process.execPath, [BIN, ...args], { env })
  return { emulator, env, cli }
}
