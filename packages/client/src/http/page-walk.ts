import type { Answer } from './transport.js'

/** Rows per request of every list walk: the most the service gives (fewer calls against the limits). */
export const PAGE_SIZE = 100

/** The paging fields of a list's answer, wherever the service put them. */
export interface Paging {
  lastPage: number | undefined
  total: number | undefined
}

const LAST_PAGE = ['lastPage', 'last_page', 'totalPages', 'total_pages', 'pageCount', 'pages']
const TOTAL = ['total', 'totalCount', 'total_count', 'count']

const wholeNumber = (value: unknown) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined

/**
 * The spec names no paging fields, so they are looked for: an object beside
 * `data` (`pagination`, `meta`, ...) with a last page (or a total and the page
 * size). Undefined fields when there is none: the walk then stops at a short page.
 */
export function readPaging(extra: Record<string, unknown>, size: number): Paging {
  for (const value of [extra, ...Object.values(extra)]) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue
    const fields = value as Record<string, unknown>
    const total = TOTAL.map((name) => wholeNumber(fields[name])).find((n) => n !== undefined)
    const last = LAST_PAGE.map((name) => wholeNumber(fields[name])).find((n) => n !== undefined)
    if (last !== undefined || total !== undefined) {
      return { lastPage: last ?? Math.max(1, Math.ceil((total as number) / size)), total }
    }
  }
  return { lastPage: undefined, total: undefined }
}

/** Most walks over the list when it keeps changing under the walk. */
const MAX_PASSES = 3

/**
 * Every row of an offset-paged list, each id once. The paging fields come from
 * the first answer; the walk goes to the last page, further when a later answer
 * says the list grew. Rows repeat or are skipped when the list changes during a
 * walk (the spec says so): repeats are dropped by id, and when an answer's total
 * differs from the first, the walk goes over the list again for rows it skipped
 * (at most three passes).
 */
export async function* walkPages<T>(
  fetchPage: (page: number) => Promise<Answer<T[]>>,
  size: number,
  idOf: (row: T) => unknown,
): AsyncGenerator<T> {
  const seen = new Set<unknown>()
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let first: Paging | undefined
    let changed = false
    let last: number | undefined
    for (let page = 1; ; page++) {
      const answer = await fetchPage(page)
      const paging = readPaging(answer.extra, size)
      if (!first) {
        first = paging
        last = paging.lastPage
      } else if (paging.total !== undefined && paging.total !== first.total) changed = true
      if (last !== undefined && paging.lastPage !== undefined)
        last = Math.max(last, paging.lastPage)
      for (const row of answer.data) {
        const id = idOf(row)
        if (seen.has(id)) continue
        seen.add(id)
        yield row
      }
      if (last !== undefined ? page >= last : answer.data.length < size) break
    }
    if (!changed) return
  }
}
