/** Rows and columns of plain text, aligned with spaces: every list the CLI prints. */

/** Rows of two columns, the first padded. */
export function formatRows(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([key]) => key.length))
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}`.trimEnd()).join('\n')
}

/** Rows as aligned columns, the header first. */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)),
  )
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}
