import type { ChildProcess } from 'node:child_process'

export const SCOPE: '@affiliate-webhooks'
export const DEFAULT_PORT: number
/** Whether 127.0.0.1:`port` can be listened on now. */
export function portFree(port: number): Promise<boolean>
/** A port free on 127.0.0.1 now. */
export function freePort(): Promise<number>

export interface LocalRegistry {
  /** `http://127.0.0.1:PORT/` */
  url: string
  /** An npm userconfig file (mode 0600) whose token can publish to it. */
  userconfig: string
  /** `@affiliate-webhooks:registry=URL`, for an app's `.npmrc`. */
  scopeLine: string
  child: ChildProcess
  stop(): Promise<void>
  /** The last lines Verdaccio printed. */
  log(): string
}
/** Starts Verdaccio on 127.0.0.1:`port` (a free one when 0), storage in a temporary folder. */
export function startRegistry(options?: {
  port?: number
  readyWithinMs?: number
  /** Packages this registry refuses to take (tests of a release that fails part way). */
  closed?: string[]
}): Promise<LocalRegistry>
/** Runs scripts/release.mjs of `cwd` against the registry; rejects with its output on failure. */
export function releaseTo(
  registry: LocalRegistry,
  args?: string[],
  options?: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<string>
