/**
 * The failover run shared by the failover test and `bench/failover.ts`: two
 * receiver processes, a stream of conversion lifecycles with duplicates and
 * shuffles; the replication link cut mid-stream (each delivery during the cut
 * sent once, as the service's first attempt); the primary killed and the
 * replica promoted; the stream continued against the new primary; then every
 * event delivered again (the service's retries and `recover`). What the store
 * and server are is the target's business (a function per configuration):
 * the run only forks its receiver and calls its cut and failover.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import type { ConversionEvent } from '@affiliate-webhooks/core'
import { signedDelivery } from '@affiliate-webhooks/core/testing'
import { Redis } from 'ioredis'
import { lifecycles, random, shuffle } from '../emulator/lifecycles.js'
import { REDIS_URL } from './redis-servers.js'

export interface FailoverTarget {
  /** The receiver process to fork (it reports `{ port }` over IPC when listening). */
  receiver: URL
  /** Its environment, beside EFFECTS_URL, EFFECTS_PREFIX and WEBHOOK_SECRET. */
  env: Record<string, string>
  /** Stop replication as a partition would. */
  cut(): Promise<void>
  /** Kill the primary, promote the replica; resolves once the new primary can take writes. */
  failover(): Promise<void>
}

export interface Answer {
  eventId: string
  phase: 'before' | 'cut' | 'after' | 'redelivery'
  status: number
  outcome?: string | undefined
  startedAt: number
  endedAt: number
}

export interface FailoverFigures {
  events: number
  /** Distinct events answered 2xx before the final redelivery. */
  acknowledged: number
  /** Deliveries during the cut, and how many of them were answered 2xx. */
  cutDeliveries: number
  cutAcknowledged: number
  /**
   * Events whose handler ran after the event had been answered 2xx: handled a
   * second time, or answered `stale`/`duplicate` and then handled all the same.
   */
  appliedAfterAcknowledged: number
  /** Events whose handler ran two or more times, acknowledged or not. */
  appliedTwice: number
  /** Events answered 2xx whose effect never landed and that no newer event of the conversion covers. */
  acknowledgedNeverApplied: number
  /** Effects of an older event applied after a newer event of its conversion was answered 2xx. */
  olderOverNewerAcknowledged: number
  /** Effects of an older event applied after a newer one's, acknowledged or not. */
  olderOverNewer: number
  /** Conversions whose final state is not their newest event's. */
  wrongFinalState: number
  answers503: number
  /** Every answer that was not 2xx, by status (0: the connection failed), e.g. 409 while another attempt held the event. */
  non2xx: Record<string, number>
  longestAnswerMs: number
  /** From the primary's kill to the new primary taking writes. */
  failoverMs: number
  runMs: number
}

const SECRET = 'whsec_failover_run'

async function send(url: string, event: ConversionEvent, attempt: number, phase: Answer['phase']) {
  const { headers, body } = await signedDelivery({ secret: SECRET, event, attempt })
  const startedAt = Date.now()
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(15_000),
    })
    const json = (await response.json().catch(() => ({}))) as { outcome?: string }
    return {
      eventId: event.id,
      phase,
      status: response.status,
      outcome: json.outcome,
      startedAt,
      endedAt: Date.now(),
    }
  } catch {
    return { eventId: event.id, phase, status: 0, startedAt, endedAt: Date.now() }
  }
}

/** Delivers each event (retrying non-2xx answers until `deadline` when `retry`), `concurrency` at a time. */
async function deliver(
  events: ConversionEvent[],
  urls: string[],
  phase: Answer['phase'],
  { retry, deadline }: { retry: boolean; deadline: number },
): Promise<Answer[]> {
  const answers: Answer[] = []
  const queue = [...events]
  const worker = async () => {
    for (let event = queue.shift(); event; event = queue.shift()) {
      for (let attempt = 1; ; attempt++) {
        const url = urls[Math.floor(Math.random() * urls.length)] as string
        const answer = await send(url, event, attempt, phase)
        answers.push(answer)
        const ok = answer.status >= 200 && answer.status < 300
        if (ok || !retry || Date.now() > deadline) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return answers
}

async function startReceivers(target: FailoverTarget, effectsPrefix: string) {
  const children: ChildProcess[] = []
  const urls: string[] = []
  for (let n = 0; n < 2; n++) {
    const child = fork(target.receiver, {
      env: {
        ...process.env,
        ...target.env,
        EFFECTS_URL: REDIS_URL,
        EFFECTS_PREFIX: effectsPrefix,
        WEBHOOK_SECRET: SECRET,
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(child)
    const [message] = (await once(child, 'message')) as [{ port: number }]
    urls.push(`http://127.0.0.1:${message.port}/`)
  }
  const stop = async () => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined
        const exited = once(child, 'exit')
        child.kill('SIGTERM')
        return exited
      }),
    )
  }
  return { urls, stop }
}

export interface ScenarioOptions {
  /** Conversions in the stream (about four events each). Default 40. */
  conversions?: number
  seed?: number
  /** Deliveries sent during the cut. Default 60. */
  duringCut?: number
}

/** One failover run against `target`; its figures. Every delivery phase is bounded in time. */
export async function runFailoverScenario(
  target: FailoverTarget,
  { conversions = 40, seed = 48, duringCut = 60 }: ScenarioOptions = {},
): Promise<FailoverFigures> {
  const started = Date.now()
  const rand = random(seed)
  const events = lifecycles(conversions, rand)
  // A third of the events are delivered twice more (timeout races, replays), shuffled.
  const stream = shuffle(
    events.flatMap((e) => (rand() < 0.35 ? [e, e, e] : [e])),
    rand,
  )
  const firstPart = Math.floor(stream.length * 0.4)
  const effectsPrefix = `aw-failover-${randomUUID().slice(0, 8)}:`
  const effects = new Redis(REDIS_URL)
  const receivers = await startReceivers(target, effectsPrefix)
  try {
    const bound = (ms: number) => ({ retry: true, deadline: Date.now() + ms })
    const answers = await deliver(
      stream.slice(0, firstPart),
      receivers.urls,
      'before',
      bound(20_000),
    )
    await target.cut()
    const cutPart = stream.slice(firstPart, firstPart + duringCut)
    answers.push(...(await deliver(cutPart, receivers.urls, 'cut', { retry: false, deadline: 0 })))
    const killedAt = Date.now()
    await target.failover()
    const failoverMs = Date.now() - killedAt
    const rest = stream.slice(firstPart + duringCut)
    answers.push(...(await deliver(rest, receivers.urls, 'after', bound(20_000))))
    answers.push(
      ...(await deliver(shuffle(events, rand), receivers.urls, 'redelivery', bound(20_000))),
    )
    const applied = await effects.lrange(`${effectsPrefix}effects`, 0, -1)
    const state = await effects.hgetall(`${effectsPrefix}state`)
    return {
      ...failoverFigures(events, answers, applied, state),
      failoverMs,
      runMs: Date.now() - started,
    }
  } finally {
    await receivers.stop()
    const keys = await effects.keys(`${effectsPrefix}*`)
    if (keys.length > 0) await effects.unlink(...keys)
    effects.disconnect()
  }
}

const is2xx = (a: Answer) => a.status >= 200 && a.status < 300

/**
 * The figures of a run, from its events, every answer, the effects log
 * (`eventId|appliedAt`, in the order applied) and the final state
 * (conversion id -> `createdAt|status`).
 */
export function failoverFigures(
  events: ConversionEvent[],
  answers: Answer[],
  applied: string[],
  state: Record<string, string>,
): Omit<FailoverFigures, 'failoverMs' | 'runMs'> {
  const byId = new Map(events.map((e) => [e.id, e]))
  const firstAck = new Map<string, number>()
  for (const a of answers.filter(is2xx)) {
    firstAck.set(
      a.eventId,
      Math.min(firstAck.get(a.eventId) ?? Number.POSITIVE_INFINITY, a.endedAt),
    )
  }
  const counts = new Map<string, number>()
  const appliedAfterAcknowledged = new Set<string>()
  let olderOverNewer = 0
  let olderOverNewerAcknowledged = 0
  const newestApplied = new Map<number, string>()
  for (const entry of applied) {
    const [eventId = '', at = '0'] = entry.split('|')
    const event = byId.get(eventId) as ConversionEvent
    const conversionId = event.data.conversion.id
    counts.set(eventId, (counts.get(eventId) ?? 0) + 1)
    if (Number(at) > (firstAck.get(eventId) ?? Number.POSITIVE_INFINITY)) {
      appliedAfterAcknowledged.add(eventId)
    }
    if ((newestApplied.get(conversionId) ?? '') > event.createdAt) olderOverNewer++
    else newestApplied.set(conversionId, event.createdAt)
    const newerAcked = events.some(
      (other) =>
        other.data.conversion.id === conversionId &&
        other.createdAt > event.createdAt &&
        (firstAck.get(other.id) ?? Number.POSITIVE_INFINITY) < Number(at),
    )
    if (newerAcked) olderOverNewerAcknowledged++
  }
  const newest = new Map<number, ConversionEvent>()
  for (const e of events) {
    const prev = newest.get(e.data.conversion.id)
    if (!prev || prev.createdAt < e.createdAt) newest.set(e.data.conversion.id, e)
  }
  const beforeRedelivery = new Set(
    answers.filter((a) => is2xx(a) && a.phase !== 'redelivery').map((a) => a.eventId),
  )
  const cut = answers.filter((a) => a.phase === 'cut')
  return {
    events: events.length,
    acknowledged: beforeRedelivery.size,
    cutDeliveries: cut.length,
    cutAcknowledged: cut.filter(is2xx).length,
    appliedAfterAcknowledged: appliedAfterAcknowledged.size,
    appliedTwice: [...counts.values()].filter((n) => n > 1).length,
    acknowledgedNeverApplied: [...firstAck.keys()].filter((id) => {
      const event = byId.get(id) as ConversionEvent
      const covered = (newestApplied.get(event.data.conversion.id) ?? '') > event.createdAt
      return (counts.get(id) ?? 0) === 0 && !covered
    }).length,
    olderOverNewerAcknowledged,
    olderOverNewer,
    wrongFinalState: [...newest].filter(
      ([id, e]) => state[String(id)] !== `${e.createdAt}|${e.data.conversion.status}`,
    ).length,
    answers503: answers.filter((a) => a.status === 503).length,
    non2xx: answers
      .filter((a) => !is2xx(a))
      .reduce<Record<string, number>>((by, a) => {
        by[a.status] = (by[a.status] ?? 0) + 1
        return by
      }, {}),
    longestAnswerMs: Math.max(0, ...answers.map((a) => a.endedAt - a.startedAt)),
  }
}
