import { describe, expect, it } from 'vitest'
import { createReceiver } from '../receiver/create-receiver.js'
import { readReceiverAnswer } from './answer.js'
import {
  RAW_BODY_FIXES,
  type RawBodyAdapter,
  type RawBodyLoss,
  rawBodyFixOf,
  rawBodyUnavailable,
} from './raw-body-fixes.js'

const adapters = Object.keys(RAW_BODY_FIXES) as RawBodyAdapter[]
const losses: RawBodyLoss[] = ['consumed', 'locked']

describe('rawBodyUnavailable(adapter, loss)', () => {
  it.each(adapters)(
    'for %s fits whole in the answer and the log line (300 characters)',
    (adapter) => {
      for (const loss of losses) {
        const error = rawBodyUnavailable(adapter, loss)
        expect(error).toMatchObject({ code: 'raw_body_unavailable', status: 500, adapter })
        expect(error.message.length).toBeLessThanOrEqual(300)
        expect(error.message).toContain(RAW_BODY_FIXES[adapter])
      }
    },
  )

  it('answers with the adapter before the message, so doctor can name that stack’s fix', () => {
    const receiver = createReceiver({ secret: 'whsec_x', onConversion: () => {}, logger: false })
    const { body } = receiver.reject(rawBodyUnavailable('h3', 'consumed'))
    expect(body.indexOf('"adapter":"h3"')).toBeLessThan(body.indexOf('"message"'))
    expect(readReceiverAnswer(body)).toEqual({ code: 'raw_body_unavailable', adapter: 'h3' })
    expect(rawBodyFixOf(readReceiverAnswer(body).adapter)).toMatch(/readRawBody/)
    expect(rawBodyFixOf('some-future-adapter')).toBeUndefined()
  })
})
