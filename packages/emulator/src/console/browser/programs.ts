import { $, el, fieldValue, fill } from './dom.js'
import { act, api } from './session.js'
import type { Answer, ApplicationRow, ProgramRow } from './types.js'

/** The programs table. */
export function renderPrograms(rows: ProgramRow[]): void {
  fill(
    $('program-rows'),
    ...rows.map((p) =>
      el(
        'tr',
        null,
        el('td', { text: String(p.id) }),
        el('td', { text: p.merchantName || '' }),
        el('td', { text: p.category || '' }),
        el('td', { text: p.payoutType || '' }),
        el('td', { text: p.approvalType || '' }),
        el('td', { text: p.status || '' }),
      ),
    ),
  )
}

function applicationRow(a: ApplicationRow): HTMLElement {
  const decide = (status: string) => () =>
    act('POST', `/emulator/applications/${a.applicationId}/decision`, { status })
  const buttons =
    a.status === 'pending'
      ? el(
          'span',
          { class: 'buttons' },
          el('button', { type: 'button', text: 'Approve', onclick: decide('approved') }),
          el('button', { type: 'button', text: 'Reject', onclick: decide('rejected') }),
        )
      : null
  return el(
    'tr',
    null,
    el('td', { text: String(a.applicationId) }),
    el('td', { text: `${a.programId} ${a.merchantName || ''}` }),
    el('td', { text: String(a.channelId) }),
    el('td', null, el('span', { class: `status status-${a.status}`, text: a.status })),
    el('td', null, buttons),
  )
}

/** The applications table, with Approve and Reject on a pending one. */
export function renderApplications(rows: ApplicationRow[]): void {
  fill($('application-rows'), ...rows.map(applicationRow))
}

/** Every row of a paged /v1 list: page 1, then the rest up to its last page. */
export async function allPages<T>(path: string): Promise<Answer<T[]>> {
  const join = path.includes('?') ? '&' : '?'
  const page = (n: number) => api<T[]>('GET', `${path}${join}size=100&page=${n}`)
  const first = await page(1)
  const last = first.pagination?.lastPage || 1
  const rest: Promise<Answer<T[]>>[] = []
  for (let n = 2; n <= last; n++) rest.push(page(n))
  const more = await Promise.all(rest)
  return { ...first, data: more.reduce((rows, answer) => rows.concat(answer.data), first.data) }
}

/** The program filters as a query string (`?search=...`), or nothing. */
export function programQuery(): string {
  const query = new URLSearchParams()
  for (const name of ['search', 'category', 'payoutType', 'approvalType', 'status']) {
    const value = fieldValue(`program-${name}`).trim()
    if (value) query.set(name, value)
  }
  const text = query.toString()
  return text ? `?${text}` : ''
}
