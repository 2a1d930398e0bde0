import { describe, expect, it } from 'vitest'
import { isApiError } from '../shared/api-error.js'
import { authenticate, grants, parseApiKey, requireScope, SCOPES } from './api-keys.js'

const KEY = `la_${'a1'.repeat(16)}`

describe('parseApiKey', () => {
  it('a bare key has every scope; KEY:scope,scope only those', () => {
    expect(parseApiKey(KEY)).toEqual({ key: KEY, scopes: SCOPES })
    expect(parseApiKey(`${KEY}:webhooks:read, reports:read,webhooks:read`)).toEqual({
      key: KEY,
      scopes: ['webhooks:read', 'reports:read'],
    })
  })

  it('refuses a key of the wrong shape and an unknown scope', () => {
    for (const spec of [
      'la_short',
      `lb_${'a'.repeat(32)}`,
      `la_${'a'.repeat(33)}`,
      `la_${'-'.repeat(32)}`,
    ]) {
      expect(() => parseApiKey(spec), spec).toThrow(/la_ followed by 32/)
    }
    expect(() => parseApiKey(`${KEY}:webhooks:admin`)).toThrow(/unknown scope "webhooks:admin"/)
    expect(() => parseApiKey(`${KEY}:`)).toThrow(/unknown scope ""/)
  })
})

describe('scopes', () => {
  it('write implies read, read does not imply write', () => {
    expect(grants(['webhooks:write'], 'webhooks:read')).toBe(true)
    expect(grants(['webhooks:read'], 'webhooks:write')).toBe(false)
    expect(grants(['links:write'], 'webhooks:read')).toBe(false)
  })

  it('requireScope throws insufficient_scope with required and granted', () => {
    try {
      requireScope({ key: KEY, scopes: ['reports:read'] }, 'webhooks:write')
      expect.unreachable()
    } catch (error) {
      expect(isApiError(error) && [error.status, error.body()]).toEqual([
        403,
        { code: 'insufficient_scope', required: 'webhooks:write', granted: ['reports:read'] },
      ])
    }
  })
})

describe('authenticate', () => {
  const keys = new Map([[KEY, { key: KEY, scopes: SCOPES }]])
  it('finds the Bearer key', () => {
    expect(authenticate(`Bearer ${KEY}`, keys).key).toBe(KEY)
    expect(authenticate(`bearer  ${KEY} `, keys).key).toBe(KEY)
  })

  it('401 invalid_api_key for a missing, malformed or unknown key', () => {
    for (const header of [
      undefined,
      '',
      KEY,
      `Basic ${KEY}`,
      'Bearer la_x',
      `Bearer la_${'b'.repeat(32)}`,
    ]) {
      expect(() => authenticate(header, keys)).toThrow(
        expect.objectContaining({ code: 'invalid_api_key', status: 401 }),
      )
    }
  })
})
