import type { Delivery, WebhookEndpoint } from '@affiliate-webhooks/client'
import { describe, expect, it } from 'vitest'
import {
  answerOf,
  formatDeliveries,
  formatEndpoint,
  formatEndpoints,
  formatFollowEvent,
  formatHealthFindings,
  formatRecovery,
  formatReplaySummary,
} from './endpoint-text.js'

const endpoint: WebhookEndpoint = {
  id: 'wh_1',
  url: 'https://shop.example.com/hooks',
  events: ['conversion.created', 'conversion.updated'],
  description: null,
  status: 'disabled',
  consecutiveFailures: 20,
  disabledAt: '2026-11-20T09:00:00Z',
  lastDeliveryAt: null,
}

const delivery: Delivery = {
  id: 'dlv_1',
  status: 'failed',
  responseStatus: 500,
  responseBody: 'boom\n  at handler',
  durationMs: 12,
  eventId: 'evt_1',
  eventType: 'conversion.created',
  attempts: 8,
  createdAt: '2026-11-20T08:00:00Z',
}

describe('endpoints and deliveries', () => {
  it('one endpoint as rows, a list as a table, and how to make the first', () => {
    expect(formatEndpoint(endpoint)).toContain('consecutive failures  20')
    expect(formatEndpoint(endpoint)).toContain('description           -')
    expect(formatEndpoints([endpoint]).split('\n')[1]).toMatch(/^wh_1 +disabled +20 +https:/)
    expect(formatEndpoints([])).toMatch(/^no endpoints/)
  })

  it("the receiver's answer in one short cell, or why there was none", () => {
    expect(answerOf(delivery)).toBe('500 boom at handler')
    expect(answerOf({ ...delivery, responseStatus: null, errorMessage: 'timeout' })).toBe('timeout')
    expect(formatDeliveries([delivery]).split('\n')[1]).toMatch(
      /^dlv_1 +evt_1 +conversion.created +failed +8 /,
    )
    expect(formatDeliveries([])).toBe('no deliveries')
  })

  it('a followed attempt and an endpoint change, each on one line', () => {
    const attempt = {
      type: 'attempt',
      at: '2026-11-20T09:15:07.000Z',
      endpointId: 'wh_1',
      deliveryId: 'dlv_1',
      eventId: 'evt_1',
      eventType: 'conversion.created',
      attempt: 2,
      status: 'retrying',
      responseStatus: 401,
      outcome: null,
      errorCode: 'signature_mismatch',
      durationMs: 9,
      errorMessage: null,
      nextAttemptAt: '2026-11-20T09:20:07.000Z',
    } as const
    expect(formatFollowEvent(attempt)).toBe(
      '09:15:07  evt_1  conversion.created  attempt 2  401 signature_mismatch (retrying)  9 ms',
    )
    // With several endpoints every line names its own.
    expect(formatFollowEvent(attempt, { endpoint: true })).toBe(
      '09:15:07  wh_1  evt_1  conversion.created  attempt 2  401 signature_mismatch (retrying)  9 ms',
    )
    // A 2xx answer says the receiver's outcome: processed and duplicate tell apart.
    const duplicate = {
      ...attempt,
      status: 'succeeded',
      responseStatus: 200,
      outcome: 'duplicate',
      errorCode: null,
      nextAttemptAt: null,
    } as const
    expect(formatFollowEvent(duplicate)).toBe(
      '09:15:07  evt_1  conversion.created  attempt 2  200 duplicate (succeeded)  9 ms',
    )
    expect(
      formatFollowEvent({
        type: 'endpoint',
        at: '2026-11-20T09:15:07Z',
        endpointId: 'wh_1',
        status: 'disabled',
      }),
    ).toBe('09:15:07  wh_1 disabled: deliveries stopped')
  })
})

describe('replay, recovery and health', () => {
  const summary = {
    replayed: 2,
    alreadyReplaying: 1,
    failed: [{ deliveryId: 'dlv_9', error: '404 not_found' }],
    interrupted: false,
  }

  it('a replay of many: counts, then each refusal', () => {
    expect(formatReplaySummary(summary, 4)).toBe(
      'replayed 2 of 4, 1 already replaying, 1 refused\n  dlv_9: 404 not_found',
    )
  })

  it("a recovery names the window it cannot repair, in the service's clock", () => {
    const text = formatRecovery({
      endpointId: 'wh_1',
      disabledAt: '2026-11-20T09:00:00Z',
      reenabledAt: '2026-11-20T10:00:00Z',
      since: null,
      failedFound: 1,
      toReplay: 1,
      left: [],
      replay: { ...summary, replayed: 1, alreadyReplaying: 0, failed: [] },
      stillQueued: { pending: 0, retrying: 0, firstNextAttemptAt: null, lastNextAttemptAt: null },
    })
    expect(text).toMatch(
      /^wh_1 re-enabled; the service had disabled it at 2026-11-20T09:00:00Z \(the service's clock\)$/m,
    )
    expect(text).toContain('replayed 1 of 1 failed delivery whose event was never acknowledged')
    expect(text).toContain(
      "from 2026-11-20T09:00:00Z (the service's clock) until this command re-enabled it",
    )
  })

  it('a recovery names each failed delivery it left, and why, and each refusal', () => {
    const text = formatRecovery({
      endpointId: 'wh_1',
      disabledAt: null,
      reenabledAt: null,
      since: '2026-11-20T08:00:00.000Z',
      failedFound: 5,
      toReplay: 2,
      left: [
        {
          deliveryId: 'dlv_1',
          eventId: 'evt_1',
          reason: 'acknowledged',
          acknowledgement: { by: 'answer', responseStatus: 200, outcome: 'processed' },
          createdAt: '2026-11-20T09:00:00.000Z',
        },
        {
          deliveryId: 'dlv_2',
          eventId: 'evt_2',
          reason: 'acknowledged',
          acknowledgement: { by: 'delivery', deliveryId: 'dlv_7' },
          createdAt: '2026-11-20T09:00:00.000Z',
        },
        {
          deliveryId: 'dlv_3',
          eventId: null,
          reason: 'before_since',
          createdAt: '2026-11-19T09:00:00.000Z',
        },
      ],
      replay: { ...summary, replayed: 1, alreadyReplaying: 0 },
      stillQueued: { pending: 0, retrying: 0, firstNextAttemptAt: null, lastNextAttemptAt: null },
    })
    expect(text).toBe(
      [
        'wh_1 was active; nothing to re-enable',
        'replayed 1 of 2 failed deliveries whose event was never acknowledged, created since 2026-11-20T08:00:00.000Z, 1 refused',
        '  dlv_9: refused: 404 not_found',
        'left 3 of 5 failed deliveries:',
        '  dlv_1 (evt_1): its event was acknowledged: the receiver answered 200 processed; a later replay came due while the endpoint was disabled and was marked failed unsent',
        '  dlv_2 (evt_2): its event was acknowledged: delivery dlv_7 of the same event succeeded',
        '  dlv_3: created 2026-11-19T09:00:00.000Z, before --since 2026-11-20T08:00:00.000Z',
      ].join('\n'),
    )
  })

  it('findings under the endpoint line, marked, with their fix', () => {
    const text = formatHealthFindings(endpoint, [
      { level: 'problem', title: 'disabled', detail: 'line one\nline two', fix: 'recover wh_1' },
      { level: 'ok', title: 'fine', detail: 'nothing' },
    ])
    expect(text).toBe(
      [
        'wh_1  https://shop.example.com/hooks  (disabled)',
        '',
        '[x] disabled',
        '    line one',
        '    line two',
        '    fix: recover wh_1',
        '',
        '[ok] fine',
        '    nothing',
      ].join('\n'),
    )
  })
})
