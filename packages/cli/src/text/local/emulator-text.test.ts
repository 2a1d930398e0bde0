import type { AttemptLogEntry, Emulator } from '@affiliate-webhooks/emulator'
import { describe, expect, it } from 'vitest'
import {
  emulatorBanner,
  formatAttemptLine,
  formatEndpointLine,
  formatRelayed,
  terminalLog,
} from './emulator-text.js'

const AT = Date.parse('2026-11-20T09:15:07.000Z')
const entry: AttemptLogEntry = {
  at: AT,
  dueAt: AT,
  batchAt: AT,
  webhookId: 'wh_1',
  deliveryId: 'dlv_1',
  eventId: 'evt_1',
  eventType: 'conversion.created',
  attempt: 3,
  ok: false,
  responseStatus: 401,
  result: '401',
  durationMs: 12,
  errorMessage: null,
  errorCode: 'signature_mismatch',
}

describe('the emulator terminal lines', () => {
  it('one attempt: time, endpoint, event, type, attempt n/8, result and the receiver code, ms', () => {
    expect(formatAttemptLine(entry)).toBe(
      '09:15:07  wh_1  evt_1  conversion.created  attempt 3/8  401 failed signature_mismatch  12 ms',
    )
    expect(formatAttemptLine({ ...entry, ok: true, result: '200', errorCode: null })).toMatch(
      /attempt 3\/8 {2}200 ok {2}12 ms$/,
    )
  })

  it('an endpoint disabled or enabled again, and why', () => {
    expect(formatEndpointLine(AT, 'wh_1', 'disabled', 'PATCH')).toBe(
      '09:15:07  wh_1  disabled: PATCH',
    )
    expect(formatEndpointLine(AT, 'wh_1', 'active', 'PATCH')).toBe(
      '09:15:07  wh_1  enabled again: PATCH',
    )
  })

  it('terminalLog writes the attempt, then the disable by the streak with the command that recovers', () => {
    const lines: string[] = []
    const log = terminalLog((line) => lines.push(line))
    log.onAttempt?.(entry, { disabledEndpoint: true } as Parameters<
      NonNullable<typeof log.onAttempt>
    >[1])
    log.onEndpointStatus?.({ at: AT, webhookId: 'wh_1', status: 'active' })
    expect(lines).toEqual([
      formatAttemptLine(entry),
      '09:15:07  wh_1  disabled: 20 failed attempts in a row; "recover wh_1" enables it and replays what failed',
      '09:15:07  wh_1  enabled again: PATCH /v1/webhooks',
    ])
  })

  it('one relayed delivery, with the error and the file when there are', () => {
    const line = formatRelayed({
      receivedAt: new Date(AT),
      eventId: 'evt_1',
      eventType: 'conversion.updated',
      attempt: '2',
      status: 502,
      durationMs: 10.6,
      error: 'ECONNREFUSED',
      savedTo: 'captures/x.json',
    })
    expect(line).toBe(
      '09:15:07  evt_1  conversion.updated  attempt 2  -> 502  11 ms  (ECONNREFUSED)  saved captures/x.json',
    )
  })

  it('the banner names the URL, key, time scale, URL rules and state, and only the tail of other keys', () => {
    const emulator = {
      url: 'http://127.0.0.1:4010',
      consoleUrl: 'http://127.0.0.1:4010/console?token=t',
      apiKeys: [
        { key: `la_${'a'.repeat(32)}`, scopes: ['webhooks:read'] },
        { key: `la_${'b'.repeat(28)}wxyz`, scopes: ['webhooks:read'] },
      ],
      generatedKey: true,
      clock: { timeScale: 60 },
      allowLoopback: false,
      account: {
        catalogue: { list: () => [1, 2] },
        channels: { list: () => [{ id: 7 }] },
      },
    } as unknown as Emulator
    const text = emulatorBanner(emulator, undefined).join('\n')
    expect(text).toContain('  URL         http://127.0.0.1:4010/v1')
    expect(text).toContain(`  API key     la_${'a'.repeat(32)}  (generated;`)
    expect(text).toContain('  More keys   ...wxyz (webhooks:read)')
    expect(text).not.toContain('b'.repeat(28))
    expect(text).toContain('divided by 60')
    expect(text).toContain('strict: public https on port 443 only')
    expect(text).toContain('  State       in memory')
    expect(text).toContain('  Catalogue   2 programs; channels 7')
  })
})
