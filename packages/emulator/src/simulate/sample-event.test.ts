import { describe, expect, it } from 'vitest'
import { randomConversionId, sampleEventBody } from './sample-event.js'

const parse = (body: string) =>
  JSON.parse(body) as {
    type: string
    createdAt: string
    data: { conversion?: { id: number; status: string } }
  }

describe('sampleEventBody', () => {
  it('picks the type from the status: created when absent or pending, updated otherwise', () => {
    const created = parse(sampleEventBody())
    expect(created.type).toBe('conversion.created')
    expect(created.data.conversion?.status).toBe('pending')
    expect(parse(sampleEventBody({ status: 'pending' })).type).toBe('conversion.created')
    const updated = parse(sampleEventBody({ status: 'approved', conversionId: 1001 }))
    expect(updated.type).toBe('conversion.updated')
    expect(updated.data.conversion).toMatchObject({ id: 1001, status: 'approved' })
  })

  it('gives an update with no status the status approved, and keeps a given createdAt', () => {
    const body = parse(
      sampleEventBody({ type: 'conversion.updated', createdAt: '2026-11-20T09:15:00.000Z' }),
    )
    expect(body.data.conversion?.status).toBe('approved')
    expect(body.createdAt).toBe('2026-11-20T09:15:00.000Z')
  })

  it('builds webhook.test with no conversion, and refuses one given a status or conversion id', () => {
    const test = parse(sampleEventBody({ type: 'webhook.test' }))
    expect(test.type).toBe('webhook.test')
    expect(test.data.conversion).toBeUndefined()
    expect(() => sampleEventBody({ type: 'webhook.test', status: 'approved' })).toThrow(TypeError)
    expect(() => sampleEventBody({ type: 'webhook.test', conversionId: 5 })).toThrow(TypeError)
  })
})

describe('randomConversionId', () => {
  it('gives six- to nine-digit integers that leave a 32-bit run after them', () => {
    const ids = Array.from({ length: 2000 }, randomConversionId)
    for (const id of ids) {
      expect(Number.isInteger(id)).toBe(true)
      expect(id).toBeGreaterThanOrEqual(100_000)
      expect(id + 1_000_000).toBeLessThan(2 ** 31)
    }
    expect(new Set(ids).size).toBeGreaterThan(1990)
  })
})
