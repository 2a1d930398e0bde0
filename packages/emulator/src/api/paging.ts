/** One page of `rows` and the paging fields the emulator puts beside `data`. */
export function paginate<T>(rows: readonly T[], page: number, size: number) {
  return {
    rows: rows.slice((page - 1) * size, page * size),
    pagination: {
      page,
      size,
      total: rows.length,
      lastPage: Math.max(1, Math.ceil(rows.length / size)),
    },
  }
}
