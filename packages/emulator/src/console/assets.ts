import { DELIVERY_STATUSES } from '@affiliate-webhooks/core/internal'
import { PROGRAM_STATUSES } from '../account/applications.js'
import { APPROVAL_TYPES, PAYOUT_TYPES } from '../account/catalogue.js'
import { CONVERSION_STATUSES } from '../api/validation.js'
import script from './browser/main.ts?script'

// The console's page, stylesheet and script, shipped inside the package as text:
// no build step for the user, nothing fetched from the internet. The page and the
// stylesheet are small templates; the option lists in the page are the spec's
// lists, rendered here. The script is TypeScript in ./browser (its own tsconfig:
// DOM types, no Node types), bundled for the browser by the package's build; it
// builds every element from text nodes, never from markup.

const options = (values: readonly string[]) =>
  values.map((value) => `<option value="${value}">${value}</option>`).join('')

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
      <label>Status <select id="trigger-status">${options(CONVERSION_STATUSES)}</select></label>
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
      <label>Status <select id="filter-status"><option value="">every status</option>${options(DELIVERY_STATUSES)}</select></label>
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
      <label>Payout <select id="program-payoutType"><option value="">any</option>${options(PAYOUT_TYPES)}</select></label>
      <label>Approval <select id="program-approvalType"><option value="">any</option>${options(APPROVAL_TYPES)}</select></label>
      <label>Status <select id="program-status"><option value="">any</option>${options(PROGRAM_STATUSES)}</select></label>
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

/** The one script: reads /console/api, listens to /console/events (built from ./browser). */
export const CONSOLE_SCRIPT: string = script
