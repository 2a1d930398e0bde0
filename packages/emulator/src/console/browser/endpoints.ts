import { $, el, fill } from './dom.js'
import { endpointLink, time } from './format.js'
import { act, say, state } from './session.js'
import type { EndpointView, Overview } from './types.js'

function streak(endpoint: EndpointView, limit: number): HTMLElement {
  const failures = endpoint.consecutiveFailures
  return el(
    'div',
    { class: 'streak' },
    el('meter', {
      min: 0,
      max: limit,
      low: limit / 2,
      high: limit - 1,
      optimum: 0,
      value: failures,
    }),
    el('span', {
      text: `${failures} of ${limit} failures in a row (the endpoint is disabled at ${limit})`,
    }),
  )
}

function endpointCard(endpoint: EndpointView, limit: number): HTMLElement {
  const path = `/v1/webhooks/${encodeURIComponent(endpoint.id)}`
  const active = endpoint.status === 'active'
  const link = el('a', {
    href: endpointLink(endpoint.id),
    title: `Link to endpoint ${endpoint.id} and its deliveries`,
    text: endpoint.id,
  })
  return el(
    'article',
    { class: 'endpoint', 'data-endpoint': endpoint.id, id: `endpoint-${endpoint.id}` },
    el(
      'h3',
      null,
      el('code', null, link),
      ' ',
      el('span', { class: `status status-${endpoint.status}`, text: endpoint.status }),
    ),
    el('p', { class: 'url', text: endpoint.url }),
    el('p', { text: `Events: ${endpoint.events.join(', ')}` }),
    streak(endpoint, limit),
    endpoint.disabledAt ? el('p', { text: `Disabled at ${time(endpoint.disabledAt)}` }) : null,
    el(
      'div',
      { class: 'buttons' },
      el('button', {
        type: 'button',
        text: 'Send test',
        onclick: () => act('POST', `${path}/test`),
      }),
      el('button', {
        type: 'button',
        text: active ? 'Disable' : 'Enable',
        onclick: () => act('PATCH', path, { status: active ? 'disabled' : 'active' }),
      }),
      el('button', {
        type: 'button',
        text: 'Rotate secret',
        onclick: () => act('POST', `${path}/rotate-secret`, undefined, showSecret),
      }),
    ),
  )
}

// The one time a secret is on the page: the rotation's answer, until dismissed.
function showSecret(endpoint: { id: string; secret: string }): void {
  const box = $('secret')
  const copy = () =>
    navigator.clipboard.writeText(endpoint.secret).then(
      () => say('Secret copied.'),
      () => say('Copying failed: select the secret and copy it by hand.', true),
    )
  const dismiss = () => {
    fill(box)
    box.hidden = true
  }
  fill(
    box,
    el('p', {
      text: `New secret of ${endpoint.id} (shown this once; the old one no longer signs):`,
    }),
    el('code', { id: 'secret-value', text: endpoint.secret }),
    el(
      'div',
      { class: 'buttons' },
      el('button', { type: 'button', text: 'Copy', onclick: copy }),
      el('button', { type: 'button', text: 'Dismiss', onclick: dismiss }),
    ),
  )
  box.hidden = false
}

/** The header, the endpoint cards, and the lists that name endpoints and conversions. */
export function renderOverview(data: Overview): void {
  state.overview = data
  $('now').textContent = `${data.now.replace('T', ' ').slice(0, 19)} UTC`
  $('scale').textContent =
    data.timeScale === 1 ? 'real time' : `${data.timeScale}\u00d7 faster than real time`
  const list = $('endpoints')
  if (data.endpoints.length === 0) {
    fill(
      list,
      el('p', { text: 'No endpoint yet: register one with POST /v1/webhooks or the CLI.' }),
    )
  } else {
    fill(list, ...data.endpoints.map((e) => endpointCard(e, data.disableAfterFailures)))
  }
  const select = $<HTMLSelectElement>('filter-endpoint')
  const chosen = select.value
  fill(
    select,
    el('option', { value: '', text: 'all endpoints' }),
    ...data.endpoints.map((e) => el('option', { value: e.id, text: `${e.id} ${e.url}` })),
  )
  select.value = chosen
  fill(
    $('known-conversions'),
    ...data.conversions.map((c) => el('option', { value: String(c.id), text: c.status })),
  )
}
