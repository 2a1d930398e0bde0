import { diagnoseSignature } from '@affiliate-webhooks/core'
import { buildConversionEvent, signPayload } from '@affiliate-webhooks/core/testing'
import { describe, expect, it } from 'vitest'
import { formatDiagnosis } from './diagnosis-text.js'

const SECRET = 'whsec_diagnose_test'
// After every createdAt the tests stamp (now, or fixed 2026 dates): an event is never signed before it was created.
const NOW = 2_000_000_000
const BODY = JSON.stringify(
  buildConversionEvent({
    id: 'evt_diagnose',
    createdAt: '2026-11-20T10:00:00.000Z',
    conversion: { id: 1001, status: 'approved', currency: 'EUR' },
  }),
)

describe('formatDiagnosis', () => {
  it('says verified with the event, or the code, then the message, the causes when several, each hint', async () => {
    const good = await diagnoseSignature({
      header: await signPayload({ secret: SECRET, payload: BODY, timestamp: NOW }),
      body: new TextEncoder().encode(BODY),
      secret: SECRET,
      now: NOW * 1000 + 1500,
    })
    expect(good.verified).toBe(true)
    expect(formatDiagnosis(good).split('\n').slice(0, 2)).toEqual([
      'verified: conversion.created evt_diagnose',
      `  ${good.message}`,
    ])
    const text = formatDiagnosis({
      verified: false,
      code: 'wrong_secret',
      message: 'No secret tried matches.',
      causes: ['wrong_secret', 'body_crlf'],
      hints: ['Check the secret.', 'Check the body.'],
      tolerance: 300,
    })
    expect(text).toBe(
      [
        'does not verify: wrong_secret',
        '  No secret tried matches.',
        '  causes: wrong_secret, body_crlf',
        '  - Check the secret.',
        '  - Check the body.',
      ].join('\n'),
    )
  })
})
