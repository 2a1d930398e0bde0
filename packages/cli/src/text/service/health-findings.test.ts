import type { Delivery, WebhookEndpoint } from '@affiliate-webhooks/client'
import { createReceiver } from '@affiliate-webhooks/core'
import { rawBodyUnavailable } from '@affiliate-webhooks/core/internal'
import { describe, expect, it } from 'vitest'
import { checkEndpointHealth } from './health-findings.js'

const endpoint = {
  id: 'we_1',
  status: 'active',
  consecutiveFailures: 2,
} as unknown as WebhookEndpoint

const receiver = createReceiver({ secret: 'whsec_x', onConversion: () => {}, logger: false })

/** A failed attempt whose answer is what the adapter for `stack` sends. */
function lostBody(stack: 'h3' | 'web' | 'express', eventId: string): Delivery {
  return {
    id: `dl_${eventId}`,
    status: 'failed',
    responseStatus: 500,
    responseBody: receiver.reject(rawBodyUnavailable(stack, 'consumed')).body,
    durationMs: 3,
    eventId,
  }
}

describe('checkEndpointHealth (doctor)', () => {
  it('names a slow handler (503 handler_timeout) and a slow body (408 body_timeout) with their fixes', () => {
    const failed = (code: 'handler_timeout' | 'body_timeout', eventId: string): Delivery => {
      const answer = receiver.reject(code)
      return {
        id: `dl_${eventId}`,
        status: 'failed',
        responseStatus: answer.status,
        responseBody: answer.body,
        durationMs: 8_000,
        eventId,
      }
    }
    const findings = checkEndpointHealth(
      endpoint,
      [failed('handler_timeout', 'evt_1'), failed('body_timeout', 'evt_2')],
      { maxAttempts: 8 },
    )
    expect(findings.find((f) => /handler_timeout/.test(f.title))?.fix).toMatch(/slow-handlers/)
    expect(findings.find((f) => /body_timeout/.test(f.title))?.fix).toMatch(/bodyTimeoutMs/)
    expect(findings.find((f) => /body_timeout/.test(f.title))?.fix).toMatch(
      /^if the answer says no byte arrived: read the body only in the webhook.*@affiliate-webhooks\/h3/,
    )
  })

  it('explains a held event (500 event_held) and names the commands that list and resolve it', () => {
    const answer = receiver.reject('event_held')
    const findings = checkEndpointHealth(
      endpoint,
      [
        {
          id: 'dl_held',
          status: 'failed',
          responseStatus: answer.status,
          responseBody: answer.body,
          durationMs: 4,
          eventId: 'evt_held',
        },
      ],
      { maxAttempts: 8 },
    )
    const held = findings.find((f) => /event_held/.test(f.title))
    expect(held?.title).toMatch(/^1 delivery: 500 event_held: the store holds an event/)
    expect(held?.fix).toMatch(
      /npx @affiliate-webhooks\/cli sql held --database .*sql resolve <event id> --rerun .*--accept/,
    )
  })

  it('names the fix of the stack that answered raw_body_unavailable, one finding per stack', () => {
    const findings = checkEndpointHealth(
      endpoint,
      [lostBody('h3', 'evt_1'), lostBody('h3', 'evt_2'), lostBody('web', 'evt_3')],
      { maxAttempts: 8 },
    )
    const h3 = findings.find((f) => /h3 adapter/.test(f.title))
    const web = findings.find((f) => /web adapter/.test(f.title))
    expect(h3).toMatchObject({
      level: 'problem',
      title: expect.stringMatching(/^2 deliveries: 500 raw_body_unavailable/),
    })
    expect(h3?.fix).toMatch(/readBody\(event\)/)
    expect(h3?.fix).not.toMatch(/express/)
    expect(web?.fix).toMatch(/context\.request\.clone\(\)/)
  })

  it("keeps Express's fix for Express", () => {
    const [finding] = checkEndpointHealth(endpoint, [lostBody('express', 'evt_4')], {
      maxAttempts: 8,
    }).filter((f) => /raw_body_unavailable/.test(f.title))
    expect(finding?.fix).toMatch(/rawBodySaver/)
  })

  it('for a wrong secret, gives the environment variable fix first, Redis only for a Redis secret source', () => {
    const answer = receiver.reject('signature_mismatch')
    const delivery: Delivery = {
      id: 'dl_s',
      status: 'failed',
      responseStatus: answer.status,
      responseBody: answer.body,
      durationMs: 3,
      eventId: 'evt_s',
    }
    const [finding] = checkEndpointHealth(endpoint, [delivery], { maxAttempts: 8 }).filter((f) =>
      /signature_mismatch/.test(f.title),
    )
    expect(finding?.fix).toMatch(
      /^a secret kept in the receiver's environment \(AFFILIATE_WEBHOOK_SECRET\): .*affiliate-webhooks rotate we_1 --show-secret, set it there and redeploy; a receiver reading secrets from Redis \(redisSecretSource\): affiliate-webhooks rotate we_1 --redis <url>/,
    )
  })

  it("reads a failed delivery this library answered 200 processed (replayed while disabled) as the library's acknowledgement, not a proxy's 200", () => {
    const acknowledged: Delivery = {
      id: 'dl_ack',
      status: 'failed',
      responseStatus: 200,
      responseBody: '{"received":true,"outcome":"processed"}',
      durationMs: 4,
      eventId: 'evt_ack',
      // Its replay was marked failed as it came due, before any attempt.
      attempts: 0,
    }
    const findings = checkEndpointHealth(
      { ...endpoint, status: 'disabled' } as WebhookEndpoint,
      [acknowledged],
      { maxAttempts: 8 },
    )
    expect(findings.map((f) => f.title)).not.toContainEqual(
      expect.stringMatching(/without this library's error code/),
    )
    expect(findings.map((f) => f.title)).not.toContainEqual(
      expect.stringMatching(/failed because the endpoint was disabled/),
    )
    expect(findings).toContainEqual({
      level: 'ok',
      title: '1 delivery failed unsent after the receiver had acknowledged its event',
      detail: expect.stringMatching(
        /^The receiver answered 200 processed x 1 \(this library's answer\); .* recover leaves them \(e\.g\. evt_ack\)\.$/,
      ),
    })
  })
})
