/**
 * What `init` prints: the plan (what it found, the files, the lines it adds,
 * the packages, what to add by hand), what it did, and the next commands.
 */
import type { Applied } from '../../init/apply.js'
import type { InitPlan } from '../../init/plan.js'

const STATE = { create: 'create', same: 'same  ', differs: 'DIFFERS' } as const

/** The first lines: what init found and why. */
export function formatFound(plan: InitPlan): string {
  const { facts } = plan
  return [
    `init: ${facts.stack.name} (${facts.stackBecause})`,
    `      store: ${facts.store.name} (${facts.storeBecause})`,
    `      ${facts.packageManager}, ${facts.typescript ? 'TypeScript' : 'JavaScript'}, ${facts.esm ? 'ESM' : 'CommonJS'}; route ${plan.path}, secret in ${plan.secretEnv}`,
  ].join('\n')
}

/** The plan: each file and line init would write, with every created file in full when `full`. */
export function formatPlan(plan: InitPlan, full: boolean): string {
  const lines = [formatFound(plan), '', 'plan:']
  for (const file of plan.files) {
    lines.push(
      `  ${STATE[file.state]}  ${file.path}${file.state === 'differs' ? ' (there with other text: kept unless --force)' : ''}`,
    )
    if (full && file.state !== 'same')
      lines.push(
        ...file.text
          .trimEnd()
          .split('\n')
          .map((line) => `    + ${line}`),
      )
  }
  for (const append of plan.appends) {
    lines.push(`  append  ${append.path}: ${append.why}`)
    lines.push(...append.lines.filter((line) => line !== '').map((line) => `    + ${line}`))
  }
  for (const script of plan.scripts) {
    lines.push(
      `  ${script.before === undefined ? 'script' : 'change'}  package.json scripts.${script.script}: ${script.why}`,
      ...(script.before === undefined ? [] : [`    - "${script.before}"`]),
      `    + "${script.after}"`,
    )
  }
  lines.push(
    plan.install.packages.length === 0
      ? '  install nothing: every package is in package.json'
      : `  install ${plan.install.command.join(' ')}`,
  )
  if (plan.edit) {
    lines.push(
      `  edit    ${plan.edit.path}: the import, and the mount ${plan.edit.where}`,
      ...plan.edit.diff.map((line) => `    ${line}`),
    )
  } else if (plan.mount && !plan.mount.mounted) {
    lines.push(
      `  by hand ${plan.mount.file ?? "your app's file"}: init did not edit it (${plan.mount.refused ?? "init does not edit your app's own file"}); add, ${plan.mount.where}:`,
      ...plan.mount.lines.flatMap((line) => line.split('\n')).map((line) => `    + ${line}`),
    )
  }
  lines.push('', 'notes:', ...plan.notes.map((note) => `  - ${note}`))
  return lines.join('\n')
}

/** After writing: what was done, and the commands to go on with. */
export function formatDone(plan: InitPlan, applied: Applied, installed: boolean): string {
  const lines: string[] = []
  if (applied.written.length > 0) lines.push(`wrote ${applied.written.join(', ')}`)
  if (applied.appended.length > 0) lines.push(`added lines to ${applied.appended.join(', ')}`)
  if (applied.edited.length > 0) lines.push(`edited ${applied.edited.join(', ')} as shown`)
  if (applied.changed.length > 0)
    lines.push(
      `not edited ${applied.changed.join(', ')}: it changed after init read it; run init again`,
    )
  if (applied.skipped.length > 0)
    lines.push(`kept ${applied.skipped.join(', ')} (other text there: --force overwrites)`)
  if (applied.notEdited.length > 0)
    lines.push(
      `not edited ${applied.notEdited.join(', ')}: the file it would import was kept; run init again with --force, or mount the webhook by hand`,
    )
  if (applied.scripts.length > 0)
    lines.push(`set package.json scripts ${applied.scripts.join(', ')} as shown`)
  if (applied.scriptsChanged.length > 0)
    lines.push(
      `not changed package.json scripts ${applied.scriptsChanged.join(', ')}: they changed after init read them; run init again`,
    )
  if (plan.install.packages.length > 0) {
    lines.push(
      installed
        ? `installed ${plan.install.packages.join(' ')}`
        : `not installed: run ${plan.install.command.join(' ')}`,
    )
  }
  lines.push('', 'next:', ...plan.next.map((line) => `  ${line}`))
  return lines.join('\n')
}

/** A second run: nothing to do. */
export function formatUpToDate(plan: InitPlan): string {
  return `${formatFound(plan)}\n\nup to date: the route, the module, .env and the packages are there; nothing changed.`
}
