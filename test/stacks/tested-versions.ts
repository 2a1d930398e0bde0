/**
 * What each stack test ran, for docs/stacks.md's generated tested-versions table:
 * recorded in .tmp/tested-versions/ for `npm run docs:stacks`, and checked against
 * the table, so a table that no longer says what ran fails the test that ran it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
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
  /** What served it: `Node 24.21.0`, `Bun 1.4.5`. */
  runtime: string
}

/** Writes the record where `npm run docs:stacks` reads it. */
export function recordVersions(record: StackRecord): void {
  mkdirSync(RECORDS, { recursive: true })
  const name = `${record.stack.replace(/[^a-z0-9]+/gi, '-')}-${record.major}.json`.toLowerCase()
  writeFileSync(join(RECORDS, name), `${JSON.stringify(record, null, 2)}\n`)
}

/** The versions a package has in the repository's own install, for the in-process stacks. */
export function rootVersions(names: string[], root: string): Record<string, string> {
  return Object.fromEntries(
    names.map((name) => [
      name,
      JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version,
    ]),
  )
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
