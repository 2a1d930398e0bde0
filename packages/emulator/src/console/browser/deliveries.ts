import { $, el, fill } from './dom.js'
import { count, deliveryLink, endpointLink, offsetText, realText, time } from './format.js'
import { act, state } from './session.js'
import type { AttemptView, DeliveryDetail, DeliveryRow } from './types.js'

const DASH = '\u2013'

function replayButton(delivery: DeliveryRow): HTMLElement | null {
  if (delivery.status !== 'succeeded' && delivery.status !== 'failed') return null
  const path = `/v1/webhooks/${encodeURIComponent(delivery.webhookId)}/deliveries/${encodeURIComponent(delivery.id)}/replay`
  return el('button', {
    type: 'button',
    text: 'Replay',
    onclick: (event) => {
      event.stopPropagation()
      void act('POST', path)
    },
  })
}

/** The deliveries table, newest first, and its count. */
export function renderDeliveries(data: { total: number; rows: DeliveryRow[] }): void {
  const rows = data.rows.map((d) =>
    el(
      'tr',
      { 'data-delivery': d.id, class: d.id === state.openDelivery ? 'open' : null },
      // Links: each delivery's attempt view and its endpoint have an address of their own.
      el(
        'td',
        null,
        el('a', { href: deliveryLink(d.id), title: `Open delivery ${d.id}`, text: d.eventId }),
      ),
      el(
        'td',
        null,
        el('a', {
          href: endpointLink(d.webhookId),
          title: `Deliveries of ${d.webhookId}`,
          text: d.webhookId,
        }),
      ),
      el('td', { text: d.eventType }),
      el('td', { text: d.conversionId === null ? DASH : String(d.conversionId) }),
      el('td', null, el('span', { class: `status status-${d.status}`, text: d.status })),
      el('td', { text: String(d.attemptsTotal) }),
      el('td', { text: time(d.createdAt) }),
    ),
  )
  fill($('delivery-rows'), ...rows)
  $('delivery-count').textContent =
    data.total > data.rows.length
      ? `newest ${data.rows.length} of ${data.total}`
      : count(data.total, 'delivery', 'deliveries')
}

// Positions on a log scale: +1 min and +24 h both stay readable on one line.
function position(ms: number, span: number): number {
  return (100 * Math.log1p(Math.max(0, ms) / 60000)) / Math.log1p(span / 60000)
}

function timeline(round: AttemptView[], schedule: number[]): HTMLElement {
  // The round starts when its first attempt went out; the others follow the schedule from there.
  const start = Date.parse(round[0]?.at ?? '')
  const span = schedule.reduce((a, b) => a + b, 0)
  const axis = el('div', { class: 'axis', role: 'img' })
  const scale = state.overview?.timeScale ?? 1
  let total = 0
  const ticks: string[] = []
  schedule.forEach((offset, index) => {
    total += offset
    const title = `attempt ${index + 2} is due ${offsetText(offset)} after attempt ${index + 1}`
    const tick = el('span', { class: 'tick', title }, offsetText(offset))
    tick.style.left = `${position(total, span)}%`
    ticks.push(offsetText(offset) + (scale !== 1 ? ` (${realText(offset, scale)} real)` : ''))
    axis.append(tick)
  })
  for (const attempt of round) {
    const dot = el('span', {
      class: `dot ${attempt.ok ? 'ok' : 'bad'}`,
      title: `attempt ${attempt.attempt}: ${attempt.result}`,
      text: String(attempt.attempt),
    })
    dot.style.left = `${position(Date.parse(attempt.at) - start, span)}%`
    axis.append(dot)
  }
  const said = `Service schedule after each failed attempt: ${ticks.join(', ')}`
  axis.setAttribute('aria-label', `Attempts on a time axis. ${said}`)
  return el('div', { class: 'timeline' }, axis, el('p', { class: 'hint', text: `${said}.` }))
}

function attemptRow(attempt: AttemptView): HTMLElement {
  const answer = attempt.answer
    ? el('pre', { text: attempt.answer })
    : attempt.errorMessage
      ? `no answer: ${attempt.errorMessage}`
      : DASH
  return el(
    'tr',
    { class: attempt.ok ? 'ok' : 'bad', 'data-attempt': String(attempt.attempt) },
    el('td', { text: `attempt ${attempt.attempt}` }),
    el('td', { text: time(attempt.at) }),
    el('td', { text: attempt.result + (attempt.ok ? ' ok' : ' failed') }),
    el('td', { text: attempt.errorCode || DASH }),
    el('td', { text: `${attempt.durationMs} ms` }),
    el('td', null, answer),
  )
}

const HEADINGS = ['Attempt', 'Sent', 'Result', 'Error code', 'Duration']

function roundSection(round: AttemptView[], index: number, schedule: number[]): HTMLElement {
  const headings = [...HEADINGS, 'Answer (first 500 characters)'].map((text) => el('th', { text }))
  return el(
    'section',
    { class: 'round' },
    el('h4', { text: index === 0 ? 'First round' : `Replay ${index}` }),
    timeline(round, schedule),
    el(
      'table',
      null,
      el('thead', null, el('tr', null, ...headings)),
      el('tbody', null, ...round.map(attemptRow)),
    ),
  )
}

/** A delivery opened: its facts, what comes next, and each round on its time axis. */
export function renderDetail(detail: DeliveryDetail): void {
  const box = $('delivery')
  const schedule = state.overview ? state.overview.retryScheduleMs : []
  const rounds = detail.rounds.map((round, index) => roundSection(round, index, schedule))
  fill(
    box,
    el('h3', null, 'Delivery ', el('code', { text: detail.id })),
    el(
      'dl',
      null,
      el('dt', { text: 'Event' }),
      el('dd', null, el('code', { text: detail.eventId }), ` ${detail.eventType}`),
      el('dt', { text: 'Conversion' }),
      el('dd', { text: detail.conversionId === null ? DASH : String(detail.conversionId) }),
      el('dt', { text: 'Endpoint' }),
      el('dd', { text: `${detail.webhookId} ${detail.endpointUrl || ''}` }),
      el('dt', { text: 'Status' }),
      el('dd', null, el('span', { class: `status status-${detail.status}`, text: detail.status })),
      el('dt', { text: 'Next' }),
      el('dd', { id: 'next-step', text: detail.next }),
    ),
    el('div', { class: 'buttons' }, replayButton(detail)),
    rounds.length === 0 ? el('p', { text: 'No attempt yet.' }) : null,
    ...rounds,
  )
  box.hidden = false
}
