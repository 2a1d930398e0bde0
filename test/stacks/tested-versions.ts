/**
 * What each stack test ran, for docs/stacks.md's generated tested-versions table:
 * recorded in .tmp/tested-versions/ for `npm run docs:stacks`, and checked against
 * the table, so a table that no longer says what ran fails the test that ran it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
// @ts-expect-error: plain JavaScript, shared with the script that writes the table
import { documentedRows, RECORDS, rowOf } from '../../scripts/stack-versions.mjs'

export interface StackRecord {
  /** The stack's name in the table. */
  stack: string
  /** The current major, or the previous one kept where users still are. */
  major: 'current' | 'previous'
  /** name to version, as loaded: the framework first. */
  packages: Record<string, string>
  /** What served it (`Node 24.21.0`, `Bun 1.4.5`); none for a stack run in the test process. */
  runtime?: string
}

/** Writes the record where `npm run docs:stacks` reads it. */
export function recordVersions(record: StackRecord): void {
  mkdirSync(RECORDS, { recursive: true })
  const name = `${record.stack.replace(/[^a-z0-9]+/gi, '-')}-${record.major}.json`.toLowerCase()
  writeFileSync(join(RECORDS, name), `${JSON.stringify(record, null, 2)}\n`)
}

/**
 * The versions the test process loads, for the stacks tested in it: shown name to
 * the folder under node_modules it loads from (an alias such as `express4`), looked
 * up in `examples/<example>/node_modules` first (a version the root does not have).
 */
export function loadedVersions(
  packages: Record<string, string>,
  example?: string,
): Record<string, string> {
  const root = new URL('../..', import.meta.url).pathname
  const versions: Record<string, string> = {}
  for (const [shown, folder] of Object.entries(packages)) {
    const own = example ? join(root, 'examples', example, 'node_modules', folder) : ''
    const dir = own && existsSync(own) ? own : join(root, 'node_modules', folder)
    versions[shown] = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version
  }
  return versions
}

/** Records what an in-process stack test loads, and checks the table names it. */
export function inProcessVersions(
  stack: string,
  major: StackRecord['major'],
  packages: Record<string, string>,
  example?: string,
): void {
  const record: StackRecord = {
    stack,
    major,
    packages: loadedVersions(packages, example),
  }
  recordVersions(record)
  documentedCase(() => record)
}

/** The test that fails when docs/stacks.md does not name what `record()` ran. */
export function documentedCase(record: () => StackRecord | undefined): void {
  it('docs/stacks.md names the versions this test ran (else: npm run docs:stacks)', () => {
    const ran = record()
    expect(ran, 'nothing was built or loaded').toBeDefined()
    const row: string = rowOf(ran)
    const rows: Map<string, string> = documentedRows()
    expect(rows.get(`${ran?.stack}|${ran?.major}`), 'run `npm run docs:stacks`').toBe(row)
  })
}
