import { describe, expect, it } from 'vitest'
import { isWrongRoute } from './route-probe.js'

describe('isWrongRoute', () => {
  it('is true for 404 and 405 only', () => {
    expect([404, 405].map(isWrongRoute)).toEqual([true, true])
    expect([200, 400, 401, 410, 500, null, undefined].map(isWrongRoute)).toEqual(
      Array(7).fill(false),
    )
  })
})
