import { describe, expect, it } from 'vitest'
import { formatHeldSecrets, formatKeptSecret } from './secret-text.js'

describe('secrets kept in Redis as text', () => {
  it('one secret: its last four characters, current, and that no other verifies', () => {
    expect(formatHeldSecrets('k', [{ secret: 'whsec_first_AAAA', expiresAt: null }])).toBe(
      'Redis key k holds 1 secret: ...AAAA (current); a delivery signed with any other secret will not verify',
    )
  })

  it('after a rotation: the key, then each secret and until when it verifies, never whole', () => {
    const lines = formatKeptSecret({
      key: 'k',
      held: [
        { secret: 'whsec_second_BBBB', expiresAt: null },
        { secret: 'whsec_first_AAAA', expiresAt: Date.UTC(2026, 10, 20, 9) },
      ],
    })
    expect(lines).toEqual([
      'secret stored first in Redis key k',
      'Redis key k holds 2 secrets: ...BBBB (current), ...AAAA (verifies until 2026-11-20T09:00:00.000Z)',
    ])
    expect(lines.join('\n')).not.toContain('whsec_')
  })

  it('stored alone: only the key', () => {
    expect(formatKeptSecret({ key: 'k', held: null })).toEqual([
      'secret stored first in Redis key k',
    ])
  })
})
