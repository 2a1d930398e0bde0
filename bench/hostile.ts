/**
 * The hostile-input table: every attack of test/support/hostile-cases.ts against
 * every adapter with the receiver's default bounds, on loopback: the answer, the
 * slowest answer's time, the handler's calls and the log lines written while the
 * attack ran. Floods send 200 at once (hanging handlers 20), one flood at a
 * time. An answer that has not come after 15 s is "none" (the service gave up
 * at 10 s).
 *
 *   npm run build && node --import tsx bench/hostile.ts
 */
import { hostileAdapters } from '../test/adapters/hostile-adapters.js'
import { afterTheBody, attacks, hostileOptions, runAttack } from '../test/support/hostile-cases.js'

const CAP_MS = Number(process.env.CAP_MS ?? 15_000)
const FLOOD = Number(process.env.FLOOD ?? 200)
const only = process.env.ADAPTER

const rows: string[] = [
  '| attack | adapter | answer | time | handler calls | log lines |',
  '| --- | --- | --- | --- | --- | --- |',
]
for (const adapter of hostileAdapters) {
  if (only !== undefined && !adapter.name.startsWith(only)) continue
  const list = attacks(FLOOD, 250).filter((a) => !adapter.buffersWholeBody || afterTheBody(a))
  const one = async (attack: (typeof list)[number]) => {
    const { options, calls, lines } = hostileOptions(attack.hangs === true, {})
    const running = await adapter.start(options)
    try {
      const { slowestMs, statuses } = await runAttack(running.url, attack, CAP_MS)
      // Lines a late end writes (a handler_failed after the cap) come within a moment.
      await new Promise((r) => setTimeout(r, 200))
      const answer = [...statuses]
        .map(([k, n]) => (attack.copies > 1 ? `${k} x${n}` : k))
        .join(', ')
      const errors = lines.filter((l) => l.startsWith('error')).length
      const levels = `${lines.length}${errors > 0 ? ` (${errors} error)` : ''}`
      return `| ${attack.name} | ${adapter.name} | ${answer} | ${(slowestMs / 1000).toFixed(1)} s | ${calls.length} | ${levels} |`
    } finally {
      await Promise.race([running.close(), new Promise((r) => setTimeout(r, 2_000))])
    }
  }
  // The single attacks together (a few sockets), then each flood alone, so the
  // clients' own sockets (one process with the servers) do not delay the answers
  // they time.
  const results = await Promise.all(list.filter((a) => a.copies === 1).map(one))
  for (const flood of list.filter((a) => a.copies > 1)) results.push(await one(flood))
  rows.push(...results)
  console.error(`done: ${adapter.name}`)
}
console.log(rows.join('\n'))
process.exit(0)
