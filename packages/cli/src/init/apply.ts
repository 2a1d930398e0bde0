import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { InitPlan } from './plan.js'

/** What applying a plan did, file by file. */
export interface Applied {
  written: string[]
  appended: string[]
  skipped: string[]
  /** The app's own file, edited as the plan showed. */
  edited: string[]
  /** The app's own file left alone: it changed after the plan read it. */
  changed: string[]
  /** The app's own file left alone: a file it would import was kept with other text. */
  notEdited: string[]
}

/**
 * Writes the plan's files and appends its lines. A file that is there with
 * other text is left alone unless `force`; a line is appended only to a file
 * that does not end without a newline mid-line (one is added first). The app's
 * own file is edited only if it still holds the text the plan read.
 */
export function applyPlan(plan: InitPlan, options: { force?: boolean } = {}): Applied {
  const { dir } = plan.facts
  const applied: Applied = {
    written: [],
    appended: [],
    skipped: [],
    edited: [],
    changed: [],
    notEdited: [],
  }
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
  // The edit imports the module init writes: with that module kept as it was
  // (other text, no --force), the app's file is not edited to import it.
  if (plan.edit && applied.skipped.length > 0) applied.notEdited.push(plan.edit.path)
  else if (plan.edit) {
    // Written only over the text the diff was made from: an editor's save in between wins.
    const path = join(dir, plan.edit.path)
    const now = existsSync(path) ? readFileSync(path, 'utf8') : undefined
    if (now === plan.edit.before) {
      writeFileSync(path, plan.edit.text)
      applied.edited.push(plan.edit.path)
    } else applied.changed.push(plan.edit.path)
  }
  return applied
}
