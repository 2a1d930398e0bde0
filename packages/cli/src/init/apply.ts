import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { InitPlan } from './plan.js'

/** What applying a plan did, file by file. */
export interface Applied {
  written: string[]
  appended: string[]
  skipped: string[]
}

/**
 * Writes the plan's files and appends its lines. A file that is there with
 * other text is left alone unless `force`; a line is appended only to a file
 * that does not end without a newline mid-line (one is added first).
 */
export function applyPlan(plan: InitPlan, options: { force?: boolean } = {}): Applied {
  const { dir } = plan.facts
  const applied: Applied = { written: [], appended: [], skipped: [] }
  for (const file of plan.files) {
    if (file.state === 'same' || (file.state === 'differs' && !options.force)) {
      if (file.state === 'differs') applied.skipped.push(file.path)
      continue
    }
    mkdirSync(dirname(join(dir, file.path)), { recursive: true })
    writeFileSync(join(dir, file.path), file.text)
    applied.written.push(file.path)
  }
  for (const append of plan.appends) {
    const path = join(dir, append.path)
    const before = existsSync(path) ? readFileSync(path, 'utf8') : ''
    const gap = before === '' || before.endsWith('\n') ? '' : '\n'
    appendFileSync(path, `${gap}${append.lines.join('\n')}\n`)
    applied.appended.push(append.path)
  }
  return applied
}
