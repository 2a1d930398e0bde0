/**
 * A unified diff of two texts, line by line, with `context` unchanged lines
 * around each change: what `init` shows of a file it edits before writing it.
 * An app's file is small (hundreds of lines), so the longest common
 * subsequence table is cheap.
 */
export function unifiedDiff(path: string, before: string, after: string, context = 2): string[] {
  const a = before.replace(/\n$/, '').split('\n')
  const b = after.replace(/\n$/, '').split('\n')
  const ops = lineOps(a, b)
  const lines = [`--- ${path}`, `+++ ${path}`]
  let i = 0
  while (i < ops.length) {
    if (ops[i]?.op === ' ') {
      i++
      continue
    }
    // A hunk: from `context` lines before this change to `context` after the last change near it.
    let start = i
    while (start > 0 && i - start < context && ops[start - 1]?.op === ' ') start--
    let last = i
    for (let next = i + 1; next < ops.length && next - last <= context * 2 + 1; next++) {
      if (ops[next]?.op !== ' ') last = next
    }
    const end = Math.min(ops.length, last + 1 + context)
    const hunk = ops.slice(start, end)
    const first = hunk[0] ?? { aLine: 0, bLine: 0 }
    const aCount = hunk.filter((o) => o.op !== '+').length
    const bCount = hunk.filter((o) => o.op !== '-').length
    lines.push(`@@ -${first.aLine + 1},${aCount} +${first.bLine + 1},${bCount} @@`)
    lines.push(...hunk.map((o) => `${o.op}${o.text}`))
    i = end
  }
  return lines
}

interface Op {
  op: ' ' | '-' | '+'
  text: string
  /** The line's index in the old text (or where it would be), and in the new one. */
  aLine: number
  bLine: number
}

/** The edit script from `a` to `b` through their longest common subsequence. */
function lineOps(a: string[], b: string[]): Op[] {
  const rows = a.length + 1
  const cols = b.length + 1
  const table = new Uint32Array(rows * cols)
  for (let x = a.length - 1; x >= 0; x--) {
    for (let y = b.length - 1; y >= 0; y--) {
      table[x * cols + y] =
        a[x] === b[y]
          ? (table[(x + 1) * cols + y + 1] ?? 0) + 1
          : Math.max(table[(x + 1) * cols + y] ?? 0, table[x * cols + y + 1] ?? 0)
    }
  }
  const ops: Op[] = []
  let x = 0
  let y = 0
  while (x < a.length || y < b.length) {
    if (x < a.length && y < b.length && a[x] === b[y]) {
      ops.push({ op: ' ', text: a[x] ?? '', aLine: x++, bLine: y++ })
    } else if (
      y < b.length &&
      (x === a.length || (table[x * cols + y + 1] ?? 0) >= (table[(x + 1) * cols + y] ?? 0))
    ) {
      ops.push({ op: '+', text: b[y] ?? '', aLine: x, bLine: y++ })
    } else {
      ops.push({ op: '-', text: a[x] ?? '', aLine: x++, bLine: y })
    }
  }
  return ops
}
