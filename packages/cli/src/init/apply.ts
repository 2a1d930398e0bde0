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
  /** Scripts of package.json added or changed as the plan showed. */
  scripts: string[]
  /** Scripts left alone: package.json says something else there now. */
  scriptsChanged: string[]
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
    scripts: [],
    scriptsChanged: [],
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
  if (plan.scripts.length > 0) applyScripts(plan, applied)
  return applied
}

/**
 * Sets the plan's scripts in package.json, each only where it still reads what
 * the plan read; the rest of the file is written back as it was laid out
 * (its indentation, key order and final newline).
 */
function applyScripts(plan: InitPlan, applied: Applied): void {
  const path = join(plan.facts.dir, 'package.json')
  const text = readFileSync(path, 'utf8')
  const manifest = JSON.parse(text)
  const scripts: Record<string, string> = { ...manifest.scripts }
  for (const planned of plan.scripts) {
    if (scripts[planned.script] !== planned.before) {
      applied.scriptsChanged.push(planned.script)
      continue
    }
    scripts[planned.script] = planned.after
    applied.scripts.push(planned.script)
  }
  if (applied.scripts.length === 0) return
  manifest.scripts = scripts
  const indent = /^[ \t]+(?=")/m.exec(text)?.[0] ?? '  '
  const eol = text.includes('\r\n') ? '\r\n' : '\n'
  const body = JSON.stringify(manifest, null, indent).replaceAll('\n', eol)
  writeFileSync(path, `${body}${text.endsWith('\n') ? eol : ''}`)
}
