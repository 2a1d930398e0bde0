/**
 * The app's own scripts, read from its package.json: which one the next
 * commands start it with, and the edits that make its start scripts load
 * `.env` on stacks that do not read it themselves (plain Node, Express, Koa,
 * Fastify without fastify-cli, Hono on Node, Nest). Data in, data out: the
 * planner calls these, the writer applies what they return.
 */
import type { EnvLoader } from './stacks.js'

/** One script of package.json, as it is and as `init` would write it. */
export interface ScriptEdit {
  script: string
  before: string
  after: string
}

/** The scripts that start the app (not build, test or lint): `start`, `dev`, `serve`, and their `:` variants. */
const STARTS = /^(start|dev|serve)(:.+)?$/

/** A command Node runs a file with (`node`, `tsx`, `tsx watch`), then its flags; not `node -e` nor `node --test`. */
const NODE_RUNNER = /^(tsx\s+watch|node|tsx)(\s+)(?!-e\b|--eval\b|-p\b|--print\b|--test\b|--run\b)/
const NEST_START = /^(nest\s+start)\b/

/**
 * The command with `.env` loaded, one `&&`/`;`/`||` part at a time; undefined
 * when no part runs the app in a way this knows (then the plan says so).
 */
export function loadEnvIn(command: string, loader: EnvLoader): string | undefined {
  if (loader === 'stack') return undefined
  if (/--env-file(-if-exists)?\b/.test(command)) return undefined
  let changed = false
  const parts = command.split(/(\s*(?:&&|\|\||;)\s*)/)
  const edited = parts.map((part) => {
    // Environment assignments before the command (`NODE_ENV=production node ...`) stay in front.
    const [, assignments = '', rest = part] = /^((?:\w+=\S*\s+)*)(.*)$/s.exec(part) ?? []
    if (loader === 'nest' && NEST_START.test(rest)) {
      changed = true
      return `${assignments}${rest.replace(NEST_START, '$1 --env-file .env')}`
    }
    if (NODE_RUNNER.test(rest)) {
      changed = true
      return `${assignments}${rest.replace(NODE_RUNNER, '$1$2--env-file-if-exists=.env$2')}`
    }
    return part
  })
  return changed ? edited.join('') : undefined
}

/**
 * What makes the app's start scripts load `.env`: the edits, and the start
 * scripts left as they are because they do not run Node (or Nest's CLI) in a
 * way `init` knows. Scripts that load it already are neither.
 */
export function envScriptEdits(
  scripts: Record<string, string>,
  loader: EnvLoader,
): { edits: ScriptEdit[]; unknown: string[] } {
  const edits: ScriptEdit[] = []
  const unknown: string[] = []
  if (loader === 'stack') return { edits, unknown }
  for (const [script, before] of Object.entries(scripts)) {
    if (!STARTS.test(script) || typeof before !== 'string') continue
    if (/--env-file(-if-exists)?\b/.test(before)) continue
    const after = loadEnvIn(before, loader)
    if (after !== undefined) edits.push({ script, before, after })
    // A script that only runs other scripts (`npm run build && npm run serve`) needs nothing of its own.
    else if (!/^(\s*(npm|pnpm|yarn|bun)\s+(run\s+)?[\w:-]+\s*(&&|;|$))+$/.test(before))
      unknown.push(script)
  }
  return { edits, unknown }
}

/** The script the next commands start the app with: the stack's preferred one that the app has. */
export function startScript(
  scripts: Record<string, string>,
  preferred: readonly string[] = ['dev', 'start'],
): string | undefined {
  return preferred.find((name) => typeof scripts[name] === 'string')
}
