import { describe, expect, it } from 'vitest'
import { formatRows, formatTable } from './table.js'

describe('rows and tables', () => {
  it('pads the first column of rows, and every column of a table but the last', () => {
    expect(
      formatRows([
        ['id', 'wh_1'],
        ['description', ''],
      ]),
    ).toBe('id           wh_1\ndescription')
    expect(
      formatTable(
        ['A', 'LONGER'],
        [
          ['xyz', '1'],
          ['', '22'],
        ],
      ),
    ).toBe('A    LONGER\nxyz  1\n     22')
  })
})
