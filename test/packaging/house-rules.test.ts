/**
 * The rules `npm run lint` keeps, and proof that each one bites: the import rules
 * of .dependency-cruiser.cjs hold for the repository and fail on a deliberate
 * breach, and the API report check fails when a package exports a name its
 * report in etc/ does not show.
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const depcruise = join(root, 'node_modules/.bin/depcruise')
const config = join(root, '.dependency-cruiser.cjs')
const temp = mkdtempSync(join(tmpdir(), 'aw-house-rules-'))
afterAll(() => rmSync(temp, { recursive: true, force: true }))

/** Runs a command; its exit code and everything it printed. */
async function outcome(cmd: string, args: string[], cwd: string) {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, maxBuffer: 16 * 1024 * 1024 })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` }
  }
}

/** A small repository laid out like this one, holding only `files`. */
function sandbox(name: string, files: Record<string, string>): string {
  const dir = join(temp, name)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }),
  )
  return dir
}

const cruise = (dir: string) =>
  outcome(depcruise, ['packages', '--config', config, '--output-type', 'err'], dir)

describe('import rules', () => {
  it('hold for the whole repository', async () => {
    const { code, output } = await outcome(
      depcruise,
      [
        'packages',
        'examples',
        'scripts',
        'test',
        'bench',
        '--config',
        config,
        '--output-type',
        'err',
      ],
      root,
    )
    expect(output).not.toMatch(/error /)
    expect(code).toBe(0)
  }, 60_000)

  it.each([
    [
      'no-cycles',
      {
        'packages/emulator/src/a.ts': "import { b } from './b.js'\nexport const a = () => b\n",
        'packages/emulator/src/b.ts': "export const b = async () => (await import('./a.js')).a\n",
      },
    ],
    [
      'core-stands-alone',
      {
        'packages/core/src/index.ts': "export { redis } from '../../redis/src/index.js'\n",
        'packages/redis/src/index.ts': 'export const redis = 1\n',
      },
    ],
    [
      'adapters-import-core',
      {
        'packages/express/src/index.ts': "export { pool } from '../../postgres/src/index.js'\n",
        'packages/postgres/src/index.ts': 'export const pool = 1\n',
      },
    ],
    [
      'terminal-text-only-in-the-cli',
      {
        'packages/client/src/index.ts': "export { line } from '../../cli/src/text/line.js'\n",
        'packages/cli/src/text/line.ts': 'export const line = 1\n',
      },
    ],
    [
      'entries-only',
      {
        'packages/cli/src/index.ts': "export { pump } from '../../emulator/src/delivery/pump.js'\n",
        'packages/emulator/src/delivery/pump.ts': 'export const pump = 1\n',
      },
    ],
    [
      'emulator-floors',
      {
        'packages/emulator/src/delivery/engine.ts': "export { newId } from '../server/ids.js'\n",
        'packages/emulator/src/server/ids.ts': 'export const newId = 1\n',
      },
    ],
    [
      'emulator-shared-at-the-bottom',
      {
        'packages/emulator/src/shared/clock.ts': "export { pump } from '../delivery/pump.js'\n",
        'packages/emulator/src/delivery/pump.ts': 'export const pump = 1\n',
      },
    ],
    [
      'cli-framework-stands-alone',
      {
        'packages/cli/src/framework/io.ts':
          "export { readCapture } from '../../../emulator/src/internal.js'\n",
        'packages/emulator/src/internal.ts': 'export const readCapture = 1\n',
      },
    ],
  ])('fail on a deliberate breach of %s', async (rule, files) => {
    const { code, output } = await cruise(sandbox(rule, files))
    expect(output).toContain(`error ${rule}:`)
    expect(code).not.toBe(0)
  })
})

describe('API reports', () => {
  const web = '@affiliate-webhooks/web'
  const check = (reports: string) =>
    outcome(
      process.execPath,
      [join(root, 'scripts/api-report.mjs'), '--package', web, '--reports', reports],
      root,
    )

  it('pass when the report in etc/ is current', async () => {
    const reports = join(temp, 'current')
    mkdirSync(reports)
    copyFileSync(join(root, 'etc/web.api.md'), join(reports, 'web.api.md'))
    const { code, output } = await check(reports)
    expect(output).toContain('match their reports')
    expect(code).toBe(0)
  }, 120_000)

  it('fail when the package exports a name its report does not show', async () => {
    const reports = join(temp, 'stale')
    mkdirSync(reports)
    const report = readFileSync(join(root, 'etc/web.api.md'), 'utf8')
    // The report as it was before `affiliateWebhook` was exported.
    const stale = report.replace(/^\/\/ @public\nexport function affiliateWebhook[\s\S]*?\n\n/m, '')
    expect(stale).not.toBe(report)
    writeFileSync(join(reports, 'web.api.md'), stale)
    const { code, output } = await check(reports)
    expect(output).toContain('its public surface changed')
    expect(code).not.toBe(0)
  }, 120_000)
})
