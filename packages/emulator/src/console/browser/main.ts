// The console's one script: signs in, reads /console/api, listens to /console/events.
// The option lists (conversion and delivery statuses, payout and approval types) come
// with the page, rendered from the spec's lists; this script never repeats them.
import { renderDeliveries, renderDetail } from './deliveries.js'
import { $, el, fieldValue } from './dom.js'
import { renderOverview } from './endpoints.js'
import { count } from './format.js'
import { allPages, programQuery, renderApplications, renderPrograms } from './programs.js'
import { act, api, say, state } from './session.js'
import type { ApplicationRow, DeliveryDetail, DeliveryRow, Overview, ProgramRow } from './types.js'

type Part = [Promise<{ data: unknown } | null>, (data: never) => void]

function load(): Promise<void> {
  const query = new URLSearchParams()
  if (fieldValue('filter-endpoint')) query.set('webhookId', fieldValue('filter-endpoint'))
  if (fieldValue('filter-status')) query.set('status', fieldValue('filter-status'))
  const detail = state.openDelivery
    ? api<DeliveryDetail>('GET', `/deliveries/${encodeURIComponent(state.openDelivery)}`)
    : Promise.resolve(null)
  // Each part renders on its own: a refused program filter leaves the rest live.
  const parts: Part[] = [
    [api<Overview>('GET', '/overview'), renderOverview],
    [api<{ total: number; rows: DeliveryRow[] }>('GET', `/deliveries?${query}`), renderDeliveries],
    [detail, renderDetail],
    [allPages<ProgramRow>(`/v1/programs${programQuery()}`), renderPrograms],
    [allPages<ApplicationRow>('/v1/programs/applications'), renderApplications],
  ]
  return Promise.allSettled(parts.map((part) => part[0])).then((results) => {
    let failed: unknown = null
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        if (result.value) parts[i]?.[1](result.value.data as never)
      } else failed = failed || result.reason
    })
    if (failed) throw failed
  })
}

// One refresh at a time; events during one ask for one more after it.
function refresh(): Promise<void> {
  if (state.refreshing) {
    state.again = true
    return state.refreshing
  }
  state.refreshing = load()
    .catch((error: Error) => say(error.message, true))
    .then(() => {
      state.refreshing = null
      if (state.again) {
        state.again = false
        void refresh()
      }
    })
  return state.refreshing
}

function connect(): void {
  const live = $('live')
  const source = new EventSource(`/console/events?token=${encodeURIComponent(state.token)}`)
  source.onopen = () => {
    live.textContent = 'live'
    live.className = 'live on'
    void refresh()
  }
  source.onerror = () => {
    live.textContent = 'reconnecting\u2026'
    live.className = 'live off'
  }
  source.addEventListener('attempt', () => void refresh())
  source.addEventListener('change', () => void refresh())
}

// The address names what to show: #delivery=<id> opens its attempt view,
// #endpoint=<id> shows that endpoint's card and only its deliveries.
function followHash(): void {
  const wanted = new URLSearchParams(location.hash.slice(1))
  const delivery = wanted.get('delivery')
  const endpoint = wanted.get('endpoint')
  if (delivery) {
    state.openDelivery = delivery
    void refresh()
    $('delivery').scrollIntoView()
  } else if (endpoint) {
    const select = $<HTMLSelectElement>('filter-endpoint')
    if (!Array.from(select.options).some((o) => o.value === endpoint)) {
      select.append(el('option', { value: endpoint, text: endpoint }))
    }
    select.value = endpoint
    void refresh().then(() => document.getElementById(`endpoint-${endpoint}`)?.scrollIntoView())
  }
}

/** Why this conversion cannot be triggered as this type, or null when it can. */
function refusal(type: string, id: number, known: readonly number[]): string | null {
  if (!Number.isSafeInteger(id)) return 'The conversion id must be a whole number.'
  if (type === 'conversion.updated' && !known.includes(id)) {
    return `Conversion ${id} is new: conversion.created makes it; updated needs an existing one.`
  }
  if (type === 'conversion.created' && known.includes(id)) {
    return `Conversion ${id} exists: choose conversion.updated with another status.`
  }
  return null
}

function trigger(event: Event): void {
  event.preventDefault()
  const type = fieldValue('trigger-type')
  const given = fieldValue('trigger-id').trim()
  const known = (state.overview ? state.overview.conversions : []).map((c) => c.id)
  const id = given === '' ? Math.max(1000, Math.max(...known, 0) + 1) : Number(given)
  const refused = refusal(type, id, known)
  if (refused) {
    say(refused, true)
    return
  }
  const body: Record<string, string | number> = { id, status: fieldValue('trigger-status') }
  for (const name of ['saleAmount', 'commission', 'currency']) {
    const value = fieldValue(`trigger-${name}`).trim()
    if (value) body[name] = value
  }
  type Emitted = { event: { type: string; id: string } | null; deliveries: unknown[] }
  void act<Emitted>('POST', '/emulator/conversions', body, (data) => {
    const queued = count(data.deliveries.length, 'delivery', 'deliveries')
    $('trigger-result').textContent = data.event
      ? `${data.event.type} ${data.event.id} for conversion ${id}: ${queued} queued`
      : `Conversion ${id} already has that status: no event.`
  })
}

function signIn(message?: string): void {
  state.token = ''
  sessionStorage.removeItem('console-token')
  $('app').hidden = true
  $('signin').hidden = false
  if (message) say(`${message} Enter the API key the emulator printed.`, true)
}

function start(token: string): void {
  state.token = token
  sessionStorage.setItem('console-token', token)
  $('signin').hidden = true
  $('app').hidden = false
  connect()
  void refresh()
}

function submitKey(event: Event): void {
  event.preventDefault()
  const input = $<HTMLInputElement>('api-key')
  api<{ token: string }>('POST', '/session', { apiKey: input.value })
    .then((answer) => {
      input.value = ''
      say('Signed in.')
      start(answer.data.token)
      followHash()
    })
    .catch((error: Error) => say(error.message, true))
}

state.refresh = refresh
state.signIn = signIn

document.addEventListener('DOMContentLoaded', () => {
  $('filter-status').addEventListener('change', () => void refresh())
  $('filter-endpoint').addEventListener('change', () => void refresh())
  $('program-filters').addEventListener('submit', (event) => {
    event.preventDefault()
    void refresh()
  })
  $('trigger').addEventListener('submit', trigger)
  $('signin-form').addEventListener('submit', submitKey)
  const params = new URLSearchParams(location.search)
  const token = params.get('token') || sessionStorage.getItem('console-token')
  // The token leaves the address bar (and the history) once read.
  if (params.has('token')) history.replaceState(null, '', location.pathname + location.hash)
  window.addEventListener('hashchange', followHash)
  if (token) {
    start(token)
    followHash()
  } else signIn()
})
