/**
 * scripts/check-tests.mjs (in `npm run lint`) bites: on sample files it fails on
 * every way of not running a test and on a catch that does not assert on the
 * error it caught, and passes the honest forms; on the repository it passes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { run } from '../support/run-process.js'

const root = new URL('../..', import.meta.url).pathname
const script = join(root, 'scripts/check-tests.mjs')
const dir = mkdtempSync(join(tmpdir(), 'aw-test-guard-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function check(name: string, text: string) {
  const file = join(dir, name)
  writeFileSync(file, text)
  const result = await run(process.execPath, [script, file])
  return { code: result.code, lines: result.stderr.split('\n').filter(Boolean) }
}

/** Skipping calls, their names joined at run time: this file itself skips nothing. */
const m = (...parts: string[]) => parts.join('.')
const skipping = [
  `${m('it', 'skip')}('a', () => {})`,
  `${m('describe', 'only')}('a', () => {})`,
  `${m('it', 'todo')}('a')`,
  `${m('it', 'skipIf')}(process.env.CI)('a', () => {})`,
  `${m('describe', 'runIf')}(hasRedis)('a', () => {})`,
  `${m('test', 'concurrent', 'only')}('a', () => {})`,
  `it('a', (ctx) => { ${m('ctx', 'skip')}() })`,
  `const { skipIf } = it\n${['skip', 'If'].join('')}(true)('a', () => {})`,
]

describe('check-tests', () => {
  it.each(skipping)('fails on %s', async (line) => {
    const { code, lines } = await check('skip.test.ts', `${line}\n`)
    expect(code).toBe(1)
    expect(lines[0]).toMatch(
      /skip\.test\.ts:\d+ \.?(skip|only|todo|skipIf|runIf)\b.*every test runs/,
    )
  })

  it('fails on a catch that does not assert on the error it caught, whatever else it checks', async () => {
    const { code, lines } = await check(
      'unreachable.test.ts',
      [
        "it('a', async () => {",
        '  try {',
        '    await verify()',
        '    expect.unreachable()',
        '  } catch (error) {',
        '    const text = String(error)',
        "    expect(text).not.toContain('secret')",
        '  }',
        '  try {',
        '    await verify()',
        '    expect.unreachable()',
        '  } catch (error) {',
        '    expect(error).toBeDefined()',
        '  }',
        '  try {',
        '    expect.unreachable()',
        '  } catch {}',
        '})',
      ].join('\n'),
    )
    expect(code).toBe(1)
    expect(lines).toEqual([
      expect.stringMatching(/unreachable\.test\.ts:2 try \{ expect\.unreachable\(\) \} catch/),
      expect.stringMatching(/unreachable\.test\.ts:9 try/),
      expect.stringMatching(/unreachable\.test\.ts:15 try/),
    ])
  })

  it('passes a catch that asserts on the caught error, rejects, and words in strings or comments', async () => {
    const { code, lines } = await check(
      'honest.test.ts',
      [
        `// ${m('it', 'skip')} and ${m('describe', 'only')} named in a comment are not calls`,
        `it('says ${m('', 'only')} in a string', async () => {`,
        '  try {',
        '    requireScope()',
        '    expect.unreachable()',
        '  } catch (error) {',
        "    expect(isApiError(error) && error.code).toBe('insufficient_scope')",
        '  }',
        "  await expect(verify()).rejects.toThrow('mismatch')",
        '})',
      ].join('\n'),
    )
    expect(lines).toEqual([])
    expect(code).toBe(0)
  })

  it('passes on the repository: every test runs, every caught error is asserted on', async () => {
    const result = await run(process.execPath, [script])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^check-tests: \d{3,} files/)
  })
})
