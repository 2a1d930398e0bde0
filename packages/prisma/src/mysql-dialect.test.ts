import { describe, expect, it } from 'vitest'
import { firstCallRow } from './mysql-dialect.js'

describe('firstCallRow (a CALL through Prisma on MariaDB)', () => {
  it("reads the adapter's shape: the first result set's first row, as an array, under an unnamed column", () => {
    // What @prisma/adapter-mariadb 7.10 returns for CALL p() answering SELECT 'stale' AS verdict.
    expect(firstCallRow([{ undefined: ['stale'] }, { undefined: 0 }])).toEqual(['stale'])
    expect(firstCallRow([{ undefined: [3, 'handler_failed,body_timeout'] }])).toEqual([
      3,
      'handler_failed,body_timeout',
    ])
  })

  it('reads a named row (an adapter that names the columns) and a row of values', () => {
    expect(firstCallRow([{ verdict: 'duplicate' }])).toEqual(['duplicate'])
    expect(firstCallRow([{ failures: 0, codes: '' }])).toEqual([0, ''])
    expect(firstCallRow([['in_progress']])).toEqual(['in_progress'])
  })

  it('says none for a procedure that answered no result set (claimed, committed)', () => {
    expect(firstCallRow([])).toBeUndefined()
    expect(firstCallRow(undefined)).toBeUndefined()
  })
})
