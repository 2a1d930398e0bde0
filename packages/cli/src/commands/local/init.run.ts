import { spawn, spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import type { Handler } from '../../framework/command.js'
import { EXIT, type Io, UsageError, writeJson } from '../../framework/io.js'
import { applyPlan } from '../../init/apply.js'
import { detectApp, InitError } from '../../init/detect.js'
import { type InitPlan, planInit, withEdit } from '../../init/plan.js'
import { formatDone, formatPlan, formatUpToDate } from '../../text/local/init-text.js'
import type { init } from './init.js'

/** Whether the app's folder is a git work tree with changes not committed. */
function uncommitted(dir: string): boolean {
  const status = spawnSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' })
  return status.status === 0 && status.stdout.trim() !== ''
}

/** One line from the terminal: yes or no. */
async function ask(io: Io, question: string): Promise<boolean> {
  io.stderr.write(`${question} [y/N] `)
  for await (const chunk of io.stdin) {
    const answer = String(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()).trim()
    return /^y(es)?$/i.test(answer)
  }
  return false
}

/** The app's package manager, with its output on stderr; resolves whether it succeeded. */
function install(io: Io, plan: InitPlan): Promise<boolean> {
  const [command, ...args] = plan.install.command as [string, ...string[]]
  io.stderr.write(`init: ${plan.install.command.join(' ')}\n`)
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: plan.facts.dir, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.on('data', (chunk) => io.stderr.write(chunk))
    child.stderr.on('data', (chunk) => io.stderr.write(chunk))
    child.on('error', () => done(false))
    child.on('exit', (code) => done(code === 0))
  })
}

/** The plan, made from the flags; a folder that is not an app is one clear line. */
function planFrom(values: Parameters<Handler<typeof init.options>>[0]): InitPlan {
  const dir = resolve(values.dir ?? process.cwd())
  if (values.path !== undefined && !/^\/[\w\-./]*$/.test(values.path)) {
    throw new UsageError(
      `--path must start with / and hold only letters, digits, -, _, . and /; got "${values.path}"`,
    )
  }
  if (values['secret-env'] !== undefined && !/^[A-Za-z_]\w*$/.test(values['secret-env'])) {
    throw new UsageError(`--secret-env must be a variable name; got "${values['secret-env']}"`)
  }
  try {
    return planInit(detectApp(dir, { framework: values.framework, store: values.store }), {
      path: values.path,
      secretEnv: values['secret-env'],
    })
  } catch (error) {
    if (error instanceof InitError)
      throw new UsageError(error.message.replace(/^init: /, ''), { hint: error.hint })
    throw error
  }
}

/** Runs `init`. */
export const run: Handler<typeof init.options> = async (values, io) => {
  const plan = await withEdit(planFrom(values))
  if (plan.upToDate) {
    if (values.json) writeJson(io, { upToDate: true, plan })
    else io.stdout.write(`${formatUpToDate(plan)}\n`)
    return EXIT.ok
  }
  if (!values.json) io.stdout.write(`${formatPlan(plan, values['dry-run'] === true)}\n`)
  if (values['dry-run']) {
    if (values.json) writeJson(io, { upToDate: false, dryRun: true, plan })
    else io.stdout.write('\ndry run: nothing written, nothing installed.\n')
    return EXIT.ok
  }
  if (uncommitted(plan.facts.dir)) {
    io.stderr.write(
      'warning: the git tree has changes not committed: commit first to see what init changes with git diff\n',
    )
  }
  if (!values.yes) {
    if (!io.stdin.isTTY) {
      throw new UsageError('nothing written: not a terminal to ask in', {
        hint: 'pass --yes to write without asking, or --dry-run to see the whole plan',
      })
    }
    if (!(await ask(io, '\nWrite these files and install?'))) {
      io.stderr.write('init: nothing written.\n')
      return EXIT.failed
    }
  }
  const applied = applyPlan(plan, { force: values.force === true })
  const installed =
    plan.install.packages.length > 0 && !values['skip-install'] ? await install(io, plan) : false
  if (values.json) writeJson(io, { upToDate: false, plan, applied, installed })
  else io.stdout.write(`\n${formatDone(plan, applied, installed)}\n`)
  const installFailed = plan.install.packages.length > 0 && !values['skip-install'] && !installed
  return applied.skipped.length > 0 ||
    applied.changed.length > 0 ||
    applied.notEdited.length > 0 ||
    applied.scriptsChanged.length > 0 ||
    installFailed
    ? EXIT.failed
    : EXIT.ok
}
