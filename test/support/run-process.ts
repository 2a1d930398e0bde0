/** A file run as a real process, for the CLI tests. */
import { spawn } from 'node:child_process'

const root = new URL('../..', import.meta.url).pathname

export interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs a file as a process, feeding `input` on stdin. */
export function run(
  file: string,
  args: string[],
  options: {
    input?: string | Uint8Array
    /** Added to this process's environment; an undefined value removes the variable. */
    env?: Record<string, string | undefined>
    onStart?: (pid: number) => void
  } = {},
): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env }
  if (!options.env?.AFFILIATE_WEBHOOK_SECRET) delete env.AFFILIATE_WEBHOOK_SECRET
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name]
  const child = spawn(file, args, { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text
  })
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text
  })
  child.stdin.end(options.input ?? '')
  if (child.pid !== undefined) options.onStart?.(child.pid)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}
