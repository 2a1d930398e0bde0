/**
 * The emulator's own words on a terminal: its banner, one line per delivery
 * attempt, one when an endpoint is disabled or enabled again, and one per
 * delivery the relay forwards. Never a secret.
 */
import {
  type AttemptLogEntry,
  DISABLE_AFTER_FAILURES,
  type Emulator,
  type EmulatorOptions,
  MAX_ATTEMPTS,
} from '@affiliate-webhooks/emulator'
import type { RelayedDelivery } from '@affiliate-webhooks/emulator/internal'

const clockTime = (ms: number) => new Date(ms).toISOString().slice(11, 19)

/** One line per attempt: time, endpoint, event and its type, attempt n/8, result (and the receiver's code), ms. */
export function formatAttemptLine(entry: AttemptLogEntry): string {
  const result = entry.ok
    ? `${entry.result} ok`
    : `${entry.result} failed${entry.errorCode ? ` ${entry.errorCode}` : ''}`
  return `${clockTime(entry.at)}  ${entry.webhookId}  ${entry.eventId}  ${entry.eventType}  attempt ${entry.attempt}/${MAX_ATTEMPTS}  ${result}  ${entry.durationMs} ms`
}

/** The line when an endpoint is disabled (by its failure streak or a PATCH) or enabled again, and why. */
export const formatEndpointLine = (at: number, webhookId: string, status: string, why: string) =>
  `${clockTime(at)}  ${webhookId}  ${status === 'disabled' ? 'disabled' : 'enabled again'}: ${why}`

/**
 * What a running emulator is, line by line: its URL and console, the key to
 * use (the others by their last four characters), time scale, URL rules, state
 * file (`statePath`, or in memory), catalogue and control routes.
 */
export function emulatorBanner(emulator: Emulator, statePath: string | undefined): string[] {
  const key = emulator.apiKeys[0]?.key ?? ''
  const limited = emulator.apiKeys
    .slice(1)
    .map((k) => `...${k.key.slice(-4)} (${k.scopes.join(',')})`)
  const scale = emulator.clock.timeScale
  return [
    'affiliate-webhooks emulator',
    `  URL         ${emulator.url}/v1`,
    `  Console     ${emulator.consoleUrl}`,
    `  API key     ${key}${emulator.generatedKey ? '  (generated; --api-key la_... to choose one)' : ''}`,
    ...(limited.length > 0 ? [`  More keys   ${limited.join('  ')}`] : []),
    `  Time scale  ${scale}${scale === 1 ? '  (real time; POST /emulator/clock advances it)' : `  (retry offsets and the rate-limit minute divided by ${scale})`}`,
    emulator.allowLoopback
      ? '  URLs        http and any port allowed on loopback hosts (localhost, 127.0.0.1, ::1); --strict for the service rules'
      : '  URLs        strict: public https on port 443 only, as the service',
    `  State       ${statePath ?? 'in memory'}`,
    `  Catalogue   ${emulator.account.catalogue.list().length} programs; channels ${emulator.account.channels
      .list()
      .map((channel) => channel.id)
      .join(', ')}`,
    '  Control     POST /emulator/conversions, POST /emulator/clock, GET /emulator/log,',
    '              /emulator/programs, /emulator/channels, /emulator/keys, /emulator/account',
  ]
}

/** One line per relayed delivery: time, event, type, attempt, the app's status, ms (and why, and where saved). */
export function formatRelayed(d: RelayedDelivery): string {
  const parts = [
    clockTime(d.receivedAt.getTime()),
    d.eventId ?? '-',
    d.eventType ?? '-',
    `attempt ${d.attempt ?? '-'}`,
    `-> ${d.status}`,
    `${Math.round(d.durationMs)} ms`,
  ]
  if (d.error) parts.push(`(${d.error})`)
  if (d.savedTo) parts.push(`saved ${d.savedTo}`)
  return parts.join('  ')
}

/**
 * The emulator's terminal log as options of {@link createEmulator}: `write`
 * gets one line per attempt, one when the failure streak disables an endpoint
 * (with the command that recovers it) and one when a PATCH changes its status.
 */
export function terminalLog(
  write: (line: string) => void,
): Pick<EmulatorOptions, 'onAttempt' | 'onEndpointStatus'> {
  return {
    onAttempt(entry, { disabledEndpoint }) {
      write(formatAttemptLine(entry))
      if (disabledEndpoint) {
        const why = `${DISABLE_AFTER_FAILURES} failed attempts in a row; "recover ${entry.webhookId}" enables it and replays what failed`
        write(formatEndpointLine(entry.at, entry.webhookId, 'disabled', why))
      }
    },
    onEndpointStatus: ({ at, webhookId, status }) =>
      write(formatEndpointLine(at, webhookId, status, 'PATCH /v1/webhooks')),
  }
}
