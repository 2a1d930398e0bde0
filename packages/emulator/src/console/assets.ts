import { DELIVERY_STATUSES } from '@affiliate-webhooks/core/internal'
import { PROGRAM_STATUSES } from '../account/applications.js'
import { APPROVAL_TYPES, PAYOUT_TYPES } from '../account/catalogue.js'
import { CONVERSION_STATUSES } from '../api/validation.js'

// The console's page, stylesheet and script, shipped inside the package as text:
// no build step for the user, nothing fetched from the internet. The script is
// plain browser JavaScript without template literals, so it lives in String.raw
// unchanged; it builds every element from text nodes, never from markup.

const options = (values: readonly string[]) =>
  values.map((value) => `<option>${value}</option>`).join('')

/** The page: the frame the script fills in. It holds no data and no secret. */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>affiliate-webhooks emulator console</title>
<link rel="stylesheet" href="/console/console.css">
<link rel="icon" href="/console/favicon.svg">
<script src="/console/console.js" defer></script>
</head>
<body>
<header>
  <h1>affiliate-webhooks emulator</h1>
  <p class="clock">Service time <strong id="now">&ndash;</strong> <span id="scale"></span>
    <span id="live" class="live off">connecting&hellip;</span></p>
</header>
<p id="notice" class="notice" role="status" aria-live="polite"></p>
<section id="signin" hidden>
  <h2>Sign in</h2>
  <form id="signin-form">
    <p>This address carries no console token. Enter the API key the emulator printed (it is sent once and never shown).</p>
    <label>API key <input id="api-key" type="password" autocomplete="off" required></label>
    <button type="submit">Sign in</button>
  </form>
</section>
<main id="app" hidden>
  <section aria-labelledby="endpoints-title">
    <h2 id="endpoints-title">Endpoints</h2>
    <div id="secret" class="secret" role="alert" hidden></div>
    <div id="endpoints"></div>
  </section>
  <section aria-labelledby="trigger-title">
    <h2 id="trigger-title">Trigger a conversion event</h2>
    <form id="trigger" class="row">
      <label>Event <select id="trigger-type">
        <option value="conversion.created">conversion.created (new conversion)</option>
        <option value="conversion.updated">conversion.updated (existing conversion)</option>
      </select></label>
      <label>Conversion id <input id="trigger-id" inputmode="numeric" list="known-conversions" placeholder="new"></label>
      <datalist id="known-conversions"></datalist>
      <label>Status <select id="trigger-status" data-statuses="@STATUSES@"></select></label>
      <label>Sale amount <input id="trigger-saleAmount" placeholder="120.00"></label>
      <label>Commission <input id="trigger-commission" placeholder="9.60"></label>
      <label>Currency <input id="trigger-currency" placeholder="EUR" size="4"></label>
      <button type="submit">Trigger</button>
    </form>
    <p id="trigger-result" role="status"></p>
  </section>
  <section aria-labelledby="deliveries-title">
    <h2 id="deliveries-title">Deliveries <small id="delivery-count"></small></h2>
    <div class="row">
      <label>Endpoint <select id="filter-endpoint"></select></label>
      <label>Status <select id="filter-status"></select></label>
    </div>
    <table class="deliveries">
      <thead><tr><th>Event id</th><th>Endpoint</th><th>Type</th><th>Conversion</th><th>Status</th><th>Attempts</th><th>Queued</th></tr></thead>
      <tbody id="delivery-rows"></tbody>
    </table>
    <article id="delivery" class="delivery" hidden></article>
  </section>
  <section aria-labelledby="programs-title">
    <h2 id="programs-title">Programs</h2>
    <form id="program-filters" class="row">
      <label>Search <input id="program-search"></label>
      <label>Category <input id="program-category"></label>
      <label>Payout <select id="program-payoutType"><option value="">any</option>@PAYOUT_TYPES@</select></label>
      <label>Approval <select id="program-approvalType"><option value="">any</option>@APPROVAL_TYPES@</select></label>
      <label>Status <select id="program-status"><option value="">any</option>@PROGRAM_STATUSES@</select></label>
      <button type="submit">Filter</button>
    </form>
    <table>
      <thead><tr><th>Id</th><th>Merchant</th><th>Category</th><th>Payout</th><th>Approval</th><th>Status</th></tr></thead>
      <tbody id="program-rows"></tbody>
    </table>
    <h2>Applications</h2>
    <table>
      <thead><tr><th>Id</th><th>Program</th><th>Channel</th><th>Status</th><th></th></tr></thead>
      <tbody id="application-rows"></tbody>
    </table>
  </section>
</main>
</body>
</html>`
  .replace('@STATUSES@', CONVERSION_STATUSES.join(','))
  .replace('@PAYOUT_TYPES@', options(PAYOUT_TYPES))
  .replace('@APPROVAL_TYPES@', options(APPROVAL_TYPES))
  .replace('@PROGRAM_STATUSES@', options(PROGRAM_STATUSES))

/** The one stylesheet. */
export const CONSOLE_STYLES = `:root {
  color-scheme: light dark;
  --ok: #1a7f37;
  --bad: #cf222e;
  --warn: #9a6700;
  --line: #d0d7de;
  --muted: #57606a;
  font-family: system-ui, sans-serif;
  font-size: 15px;
}
body { margin: 0 auto; max-width: 72rem; padding: 0 1rem 3rem; line-height: 1.4; }
header { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.3rem; }
h2 { font-size: 1.1rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin: 0 0 .4rem; }
h4 { margin: 1rem 0 .3rem; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; max-width: 28rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
tr.open { background: color-mix(in srgb, CanvasText 7%, transparent); }
button { font: inherit; padding: .25rem .7rem; cursor: pointer; }
button.link { border: 0; background: none; padding: 0; color: LinkText; text-decoration: underline; font-family: ui-monospace, monospace; }
label { display: inline-flex; flex-direction: column; font-size: .85rem; color: var(--muted); gap: .15rem; }
.row { display: flex; flex-wrap: wrap; gap: .8rem; align-items: end; }
.buttons { display: flex; gap: .5rem; margin-top: .5rem; }
.endpoint, .delivery, .secret { border: 1px solid var(--line); border-radius: 6px; padding: .8rem 1rem; margin: .6rem 0; }
.secret { border-color: var(--warn); }
.url { font-family: ui-monospace, monospace; margin: .2rem 0; }
.streak { display: flex; gap: .6rem; align-items: center; }
.streak meter { width: 12rem; }
.status { font-weight: 600; }
.status-active, .status-succeeded, .status-approved { color: var(--ok); }
.status-disabled, .status-failed, .status-rejected { color: var(--bad); }
.status-retrying, .status-pending { color: var(--warn); }
.notice { min-height: 1.4em; }
.notice.error { color: var(--bad); }
.live { margin-left: 1rem; font-size: .85rem; }
.live.on { color: var(--ok); }
.live.off { color: var(--warn); }
.hint { color: var(--muted); font-size: .85rem; }
dl { display: grid; grid-template-columns: 8rem 1fr; gap: .2rem .8rem; margin: .5rem 0; }
dt { color: var(--muted); }
dd { margin: 0; }
.timeline { margin: .8rem 0 .2rem; }
.axis { position: relative; height: 2.6rem; margin: 0 1rem; border-bottom: 2px solid var(--line); }
.tick { position: absolute; bottom: -1.5rem; transform: translateX(-50%); font-size: .75rem; color: var(--muted); white-space: nowrap; }
.tick::before { content: ""; position: absolute; left: 50%; top: -.9rem; height: .7rem; border-left: 1px solid var(--muted); }
.dot { position: absolute; bottom: .2rem; transform: translateX(-50%); width: 1.4rem; height: 1.4rem; border-radius: 50%; color: #fff; font-size: .75rem; display: grid; place-items: center; }
.dot.ok { background: var(--ok); }
.dot.bad { background: var(--bad); }
tr.bad td:first-child { border-left: 3px solid var(--bad); }
tr.ok td:first-child { border-left: 3px solid var(--ok); }
.timeline .hint { margin-top: 1.8rem; }`

/** The tab's icon, so the browser's own request for one finds it here. */
export const CONSOLE_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="#1a7f37"/></svg>'

/** The one script: reads /console/api, listens to /console/events. */
export const CONSOLE_SCRIPT = String.raw`'use strict'
;(() => {
  var STATUSES = ${JSON.stringify(DELIVERY_STATUSES)}
  var state = { token: '', overview: null, openDelivery: null, refreshing: null, again: false }

  function $(id) {
    return document.getElementById(id)
  }

  // Elements are built with text nodes only: a receiver's answer can never become markup.
  function el(tag, attrs) {
    var node = document.createElement(tag)
    var key
    for (key in attrs || {}) {
      if (key === 'text') node.textContent = attrs[key]
      else if (key === 'onclick') node.addEventListener('click', attrs[key])
      else if (attrs[key] !== undefined && attrs[key] !== null && attrs[key] !== false) {
        node.setAttribute(key, attrs[key] === true ? '' : String(attrs[key]))
      }
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i]
      if (child === null || child === undefined) continue
      node.append(typeof child === 'string' ? document.createTextNode(child) : child)
    }
    return node
  }

  function fill(node) {
    var children = Array.prototype.slice.call(arguments, 1).filter((child) => child !== null)
    node.replaceChildren.apply(node, children)
  }

  function time(iso) {
    return iso ? iso.slice(11, 19) + ' UTC' : ''
  }

  function offsetText(ms) {
    var minutes = ms / 60000
    if (minutes < 1) return '+' + Math.round(ms / 1000) + ' s'
    if (minutes < 60) return '+' + Math.round(minutes) + ' min'
    return '+' + Math.round(minutes / 60) + ' h'
  }

  function realText(ms) {
    var scale = state.overview ? state.overview.timeScale : 1
    var real = ms / scale
    if (real < 1000) return Math.round(real) + ' ms'
    if (real < 120000) return (real / 1000).toFixed(1) + ' s'
    if (real < 7200000) return Math.round(real / 60000) + ' min'
    return (real / 3600000).toFixed(1) + ' h'
  }

  function say(message, failed) {
    var note = $('notice')
    note.textContent = message
    note.className = failed ? 'notice error' : 'notice'
  }

  function api(method, path, body) {
    var init = { method: method, headers: { 'X-Console-Token': state.token } }
    if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers['Content-Type'] = 'application/json'
    }
    return fetch('/console/api' + path, init).then((res) =>
      res.json().then((answer) => {
        if (res.status === 401 && path !== '/session') signIn('The console token is not valid.')
        if (!answer.success) {
          var code = answer.error && answer.error.code ? ' (' + answer.error.code + ')' : ''
          throw new Error(answer.message + code)
        }
        return answer
      }),
    )
  }

  function act(method, path, body, done) {
    return api(method, path, body)
      .then((answer) => {
        say(answer.message)
        if (done) done(answer.data)
        refresh()
      })
      .catch((error) => say(error.message, true))
  }

  // Endpoints ---------------------------------------------------------------

  function streak(endpoint, limit) {
    var failures = endpoint.consecutiveFailures
    return el(
      'div',
      { class: 'streak' },
      el('meter', { min: 0, max: limit, low: limit / 2, high: limit - 1, optimum: 0, value: failures }),
      el('span', {
        text: failures + ' of ' + limit + ' failures in a row (the endpoint is disabled at ' + limit + ')',
      }),
    )
  }

  function endpointCard(endpoint, limit) {
    var path = '/v1/webhooks/' + encodeURIComponent(endpoint.id)
    var active = endpoint.status === 'active'
    return el(
      'article',
      { class: 'endpoint', 'data-endpoint': endpoint.id, id: 'endpoint-' + endpoint.id },
      el(
        'h3',
        null,
        el('code', null, el('a', { href: endpointLink(endpoint.id), title: 'Link to endpoint ' + endpoint.id + ' and its deliveries', text: endpoint.id })),
        ' ',
        el('span', { class: 'status status-' + endpoint.status, text: endpoint.status }),
      ),
      el('p', { class: 'url', text: endpoint.url }),
      el('p', { text: 'Events: ' + endpoint.events.join(', ') }),
      streak(endpoint, limit),
      endpoint.disabledAt ? el('p', { text: 'Disabled at ' + time(endpoint.disabledAt) }) : null,
      el(
        'div',
        { class: 'buttons' },
        el('button', {
          type: 'button',
          text: 'Send test',
          onclick: () => act('POST', path + '/test'),
        }),
        el('button', {
          type: 'button',
          text: active ? 'Disable' : 'Enable',
          onclick: () => act('PATCH', path, { status: active ? 'disabled' : 'active' }),
        }),
        el('button', {
          type: 'button',
          text: 'Rotate secret',
          onclick: () => act('POST', path + '/rotate-secret', undefined, showSecret),
        }),
      ),
    )
  }

  // The one time a secret is on the page: the rotation's answer, until dismissed.
  function showSecret(endpoint) {
    var box = $('secret')
    var value = el('code', { id: 'secret-value', text: endpoint.secret })
    fill(
      box,
      el('p', { text: 'New secret of ' + endpoint.id + ' (shown this once; the old one no longer signs):' }),
      value,
      el(
        'div',
        { class: 'buttons' },
        el('button', {
          type: 'button',
          text: 'Copy',
          onclick: () =>
            navigator.clipboard.writeText(endpoint.secret).then(
              () => say('Secret copied.'),
              () => say('Copying failed: select the secret and copy it by hand.', true),
            ),
        }),
        el('button', {
          type: 'button',
          text: 'Dismiss',
          onclick: () => {
            fill(box)
            box.hidden = true
          },
        }),
      ),
    )
    box.hidden = false
  }

  function renderOverview(data) {
    state.overview = data
    $('now').textContent = data.now.replace('T', ' ').slice(0, 19) + ' UTC'
    $('scale').textContent =
      data.timeScale === 1 ? 'real time' : data.timeScale + '\u00d7 faster than real time'
    var list = $('endpoints')
    if (data.endpoints.length === 0) {
      fill(list, el('p', { text: 'No endpoint yet: register one with POST /v1/webhooks or the CLI.' }))
    } else {
      fill.apply(
        null,
        [list].concat(data.endpoints.map((e) => endpointCard(e, data.disableAfterFailures))),
      )
    }
    var select = $('filter-endpoint')
    var chosen = select.value
    fill.apply(
      null,
      [select, el('option', { value: '', text: 'all endpoints' })].concat(
        data.endpoints.map((e) => el('option', { value: e.id, text: e.id + ' ' + e.url })),
      ),
    )
    select.value = chosen
    fill.apply(
      null,
      [$('known-conversions')].concat(
        data.conversions.map((c) => el('option', { value: String(c.id), text: c.status })),
      ),
    )
  }

  // Deliveries --------------------------------------------------------------

  function replayButton(delivery) {
    if (delivery.status !== 'succeeded' && delivery.status !== 'failed') return null
    return el('button', {
      type: 'button',
      text: 'Replay',
      onclick: (event) => {
        event.stopPropagation()
        act(
          'POST',
          '/v1/webhooks/' +
            encodeURIComponent(delivery.webhookId) +
            '/deliveries/' +
            encodeURIComponent(delivery.id) +
            '/replay',
        )
      },
    })
  }

  function renderDeliveries(data) {
    var rows = data.rows.map((d) =>
      el(
        'tr',
        { 'data-delivery': d.id, class: d.id === state.openDelivery ? 'open' : null },
        // Links: each delivery's attempt view and its endpoint have an address of their own.
        el('td', null, el('a', { href: deliveryLink(d.id), title: 'Open delivery ' + d.id, text: d.eventId })),
        el('td', null, el('a', { href: endpointLink(d.webhookId), title: 'Deliveries of ' + d.webhookId, text: d.webhookId })),
        el('td', { text: d.eventType }),
        el('td', { text: d.conversionId === null ? '\u2013' : String(d.conversionId) }),
        el('td', null, el('span', { class: 'status status-' + d.status, text: d.status })),
        el('td', { text: String(d.attemptsTotal) }),
        el('td', { text: time(d.createdAt) }),
      ),
    )
    fill.apply(null, [$('delivery-rows')].concat(rows))
    $('delivery-count').textContent =
      data.total > data.rows.length
        ? 'newest ' + data.rows.length + ' of ' + data.total
        : data.total + (data.total === 1 ? ' delivery' : ' deliveries')
  }

  function openDelivery(id) {
    state.openDelivery = id
    refresh()
  }

  function deliveryLink(id) {
    return '#delivery=' + encodeURIComponent(id)
  }

  function endpointLink(id) {
    return '#endpoint=' + encodeURIComponent(id)
  }

  // The address names what to show: #delivery=<id> opens its attempt view,
  // #endpoint=<id> shows that endpoint's card and only its deliveries.
  function followHash() {
    var wanted = new URLSearchParams(location.hash.slice(1))
    var delivery = wanted.get('delivery')
    var endpoint = wanted.get('endpoint')
    if (delivery) {
      openDelivery(delivery)
      $('delivery').scrollIntoView()
    } else if (endpoint) {
      var select = $('filter-endpoint')
      if (!Array.prototype.some.call(select.options, (o) => o.value === endpoint)) {
        select.append(el('option', { value: endpoint, text: endpoint }))
      }
      select.value = endpoint
      refresh().then(() => {
        var card = document.getElementById('endpoint-' + endpoint)
        if (card) card.scrollIntoView()
      })
    }
  }

  // Positions on a log scale: +1 min and +24 h both stay readable on one line.
  function position(ms, span) {
    return (100 * Math.log1p(Math.max(0, ms) / 60000)) / Math.log1p(span / 60000)
  }

  function timeline(round, schedule) {
    // The round starts when its first attempt went out; the others follow the schedule from there.
    var start = Date.parse(round[0].at)
    var span = schedule.reduce((a, b) => a + b, 0)
    var axis = el('div', { class: 'axis', role: 'img' })
    var total = 0
    var ticks = []
    schedule.forEach((offset, index) => {
      total += offset
      var tick = el(
        'span',
        { class: 'tick', title: 'attempt ' + (index + 2) + ' is due ' + offsetText(offset) + ' after attempt ' + (index + 1) },
        offsetText(offset),
      )
      tick.style.left = position(total, span) + '%'
      var scaled = state.overview && state.overview.timeScale !== 1
      ticks.push(offsetText(offset) + (scaled ? ' (' + realText(offset) + ' real)' : ''))
      axis.append(tick)
    })
    round.forEach((attempt) => {
      var dot = el('span', {
        class: 'dot ' + (attempt.ok ? 'ok' : 'bad'),
        title: 'attempt ' + attempt.attempt + ': ' + attempt.result,
        text: String(attempt.attempt),
      })
      dot.style.left = position(Date.parse(attempt.at) - start, span) + '%'
      axis.append(dot)
    })
    var schedule = 'Service schedule after each failed attempt: ' + ticks.join(', ')
    axis.setAttribute('aria-label', 'Attempts on a time axis. ' + schedule)
    return el('div', { class: 'timeline' }, axis, el('p', { class: 'hint', text: schedule + '.' }))
  }

  function attemptRow(attempt) {
    return el(
      'tr',
      { class: attempt.ok ? 'ok' : 'bad', 'data-attempt': String(attempt.attempt) },
      el('td', { text: 'attempt ' + attempt.attempt }),
      el('td', { text: time(attempt.at) }),
      el('td', { text: attempt.result + (attempt.ok ? ' ok' : ' failed') }),
      el('td', { text: attempt.errorCode || '\u2013' }),
      el('td', { text: attempt.durationMs + ' ms' }),
      el(
        'td',
        null,
        attempt.answer
          ? el('pre', { text: attempt.answer })
          : attempt.errorMessage
            ? 'no answer: ' + attempt.errorMessage
            : '\u2013',
      ),
    )
  }

  function renderDetail(detail) {
    var box = $('delivery')
    var schedule = state.overview ? state.overview.retryScheduleMs : []
    var rounds = detail.rounds.map((round, index) =>
      el(
        'section',
        { class: 'round' },
        el('h4', { text: index === 0 ? 'First round' : 'Replay ' + index }),
        timeline(round, schedule),
        el(
          'table',
          null,
          el(
            'thead',
            null,
            el('tr', null, el('th', { text: 'Attempt' }), el('th', { text: 'Sent' }), el('th', { text: 'Result' }),
              el('th', { text: 'Error code' }), el('th', { text: 'Duration' }), el('th', { text: 'Answer (first 500 characters)' })),
          ),
          el('tbody', null, ...round.map(attemptRow)),
        ),
      ),
    )
    fill(
      box,
      el('h3', null, 'Delivery ', el('code', { text: detail.id })),
      el(
        'dl',
        null,
        el('dt', { text: 'Event' }),
        el('dd', null, el('code', { text: detail.eventId }), ' ' + detail.eventType),
        el('dt', { text: 'Conversion' }),
        el('dd', { text: detail.conversionId === null ? '\u2013' : String(detail.conversionId) }),
        el('dt', { text: 'Endpoint' }),
        el('dd', { text: detail.webhookId + ' ' + (detail.endpointUrl || '') }),
        el('dt', { text: 'Status' }),
        el('dd', null, el('span', { class: 'status status-' + detail.status, text: detail.status })),
        el('dt', { text: 'Next' }),
        el('dd', { id: 'next-step', text: detail.next }),
      ),
      el('div', { class: 'buttons' }, replayButton(detail)),
      rounds.length === 0 ? el('p', { text: 'No attempt yet.' }) : null,
      ...rounds,
    )
    box.hidden = false
  }

  // Programs and applications -----------------------------------------------

  function renderPrograms(rows) {
    fill.apply(
      null,
      [$('program-rows')].concat(
        rows.map((p) =>
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
      ),
    )
  }

  function renderApplications(rows) {
    fill.apply(
      null,
      [$('application-rows')].concat(
        rows.map((a) => {
          var decide = (status) => () =>
            act('POST', '/emulator/applications/' + a.applicationId + '/decision', { status: status })
          return el(
            'tr',
            null,
            el('td', { text: String(a.applicationId) }),
            el('td', { text: a.programId + ' ' + (a.merchantName || '') }),
            el('td', { text: String(a.channelId) }),
            el('td', null, el('span', { class: 'status status-' + a.status, text: a.status })),
            el(
              'td',
              null,
              a.status === 'pending'
                ? el(
                    'span',
                    { class: 'buttons' },
                    el('button', { type: 'button', text: 'Approve', onclick: decide('approved') }),
                    el('button', { type: 'button', text: 'Reject', onclick: decide('rejected') }),
                  )
                : null,
            ),
          )
        }),
      ),
    )
  }

  // Every row of a paged /v1 list: page 1, then the rest up to its last page.
  function allPages(path) {
    var join = path.indexOf('?') === -1 ? '?' : '&'
    var page = (n) => api('GET', path + join + 'size=100&page=' + n)
    return page(1).then((first) => {
      var last = (first.pagination && first.pagination.lastPage) || 1
      var rest = []
      for (var n = 2; n <= last; n++) rest.push(page(n))
      return Promise.all(rest).then((more) => ({
        data: more.reduce((rows, answer) => rows.concat(answer.data), first.data),
      }))
    })
  }

  function programQuery() {
    var query = new URLSearchParams()
    ;['search', 'category', 'payoutType', 'approvalType', 'status'].forEach((name) => {
      var value = $('program-' + name).value.trim()
      if (value) query.set(name, value)
    })
    var text = query.toString()
    return text ? '?' + text : ''
  }

  // Refreshing --------------------------------------------------------------

  function load() {
    var query = new URLSearchParams()
    if ($('filter-endpoint').value) query.set('webhookId', $('filter-endpoint').value)
    if ($('filter-status').value) query.set('status', $('filter-status').value)
    var detail = state.openDelivery
      ? api('GET', '/deliveries/' + encodeURIComponent(state.openDelivery))
      : Promise.resolve(null)
    // Each part renders on its own: a refused program filter leaves the rest live.
    var parts = [
      [api('GET', '/overview'), renderOverview],
      [api('GET', '/deliveries?' + query.toString()), renderDeliveries],
      [detail, (data) => data !== undefined && renderDetail(data)],
      [allPages('/v1/programs' + programQuery()), renderPrograms],
      [allPages('/v1/programs/applications'), renderApplications],
    ]
    return Promise.allSettled(parts.map((part) => part[0])).then((results) => {
      var failed = null
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') {
          if (result.value) parts[i][1](result.value.data)
        } else failed = failed || result.reason
      })
      if (failed) throw failed
    })
  }

  // One refresh at a time; events during one ask for one more after it.
  function refresh() {
    if (state.refreshing) {
      state.again = true
      return state.refreshing
    }
    state.refreshing = load()
      .catch((error) => say(error.message, true))
      .then(() => {
        state.refreshing = null
        if (state.again) {
          state.again = false
          refresh()
        }
      })
    return state.refreshing
  }

  function connect() {
    var live = $('live')
    var source = new EventSource('/console/events?token=' + encodeURIComponent(state.token))
    source.onopen = () => {
      live.textContent = 'live'
      live.className = 'live on'
      refresh()
    }
    source.onerror = () => {
      live.textContent = 'reconnecting\u2026'
      live.className = 'live off'
    }
    source.addEventListener('attempt', refresh)
    source.addEventListener('change', refresh)
  }

  // Trigger -----------------------------------------------------------------

  function trigger(event) {
    event.preventDefault()
    var type = $('trigger-type').value
    var given = $('trigger-id').value.trim()
    var known = (state.overview ? state.overview.conversions : []).map((c) => c.id)
    var id = given === '' ? Math.max(1000, Math.max.apply(null, known.concat(0)) + 1) : Number(given)
    if (!Number.isSafeInteger(id)) return say('The conversion id must be a whole number.', true)
    if (type === 'conversion.updated' && known.indexOf(id) < 0) {
      return say('Conversion ' + id + ' is new: conversion.created makes it; updated needs an existing one.', true)
    }
    if (type === 'conversion.created' && known.indexOf(id) >= 0) {
      return say('Conversion ' + id + ' exists: choose conversion.updated with another status.', true)
    }
    var body = { id: id, status: $('trigger-status').value }
    ;['saleAmount', 'commission', 'currency'].forEach((name) => {
      var value = $('trigger-' + name).value.trim()
      if (value) body[name] = value
    })
    act('POST', '/emulator/conversions', body, (data) => {
      var queued = data.deliveries.length
      $('trigger-result').textContent = data.event
        ? data.event.type + ' ' + data.event.id + ' for conversion ' + id + ': ' + queued + (queued === 1 ? ' delivery' : ' deliveries') + ' queued'
        : 'Conversion ' + id + ' already has that status: no event.'
    })
  }

  // Starting ----------------------------------------------------------------

  function signIn(message) {
    state.token = ''
    sessionStorage.removeItem('console-token')
    $('app').hidden = true
    $('signin').hidden = false
    if (message) say(message + ' Enter the API key the emulator printed.', true)
  }

  function start(token) {
    state.token = token
    sessionStorage.setItem('console-token', token)
    $('signin').hidden = true
    $('app').hidden = false
    connect()
    refresh()
  }

  document.addEventListener('DOMContentLoaded', () => {
    fill.apply(
      null,
      [$('trigger-status')].concat(
        ($('trigger-status').dataset.statuses || '').split(',').map((s) => el('option', { value: s, text: s })),
      ),
    )
    fill.apply(
      null,
      [$('filter-status'), el('option', { value: '', text: 'every status' })].concat(
        STATUSES.map((s) => el('option', { value: s, text: s })),
      ),
    )
    $('filter-status').addEventListener('change', refresh)
    $('filter-endpoint').addEventListener('change', refresh)
    $('program-filters').addEventListener('submit', (event) => {
      event.preventDefault()
      refresh()
    })
    $('trigger').addEventListener('submit', trigger)
    $('signin-form').addEventListener('submit', (event) => {
      event.preventDefault()
      var input = $('api-key')
      api('POST', '/session', { apiKey: input.value })
        .then((answer) => {
          input.value = ''
          say('Signed in.')
          start(answer.data.token)
          followHash()
        })
        .catch((error) => say(error.message, true))
    })
    var params = new URLSearchParams(location.search)
    var token = params.get('token') || sessionStorage.getItem('console-token')
    // The token leaves the address bar (and the history) once read.
    if (params.has('token')) history.replaceState(null, '', location.pathname + location.hash)
    window.addEventListener('hashchange', followHash)
    if (token) {
      start(token)
      followHash()
    } else signIn()
  })
})()`
