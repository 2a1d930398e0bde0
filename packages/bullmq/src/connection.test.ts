import { describe, expect, it } from 'vitest'
import { jobIdFor } from './connection.js'

describe('jobIdFor', () => {
  it('keeps an evt_ id as it is', () => {
    expect(jobIdFor('evt_01JABCDEF')).toBe('evt_01JABCDEF')
  })

  it('escapes : (which BullMQ refuses in a job id) one to one, so two ids never meet', () => {
    expect(jobIdFor('evt_a:b')).toBe('evt_a%3Ab')
    expect(jobIdFor('evt_a%3Ab')).toBe('evt_a%253Ab')
    expect(jobIdFor('evt_a:b')).not.toContain(':')
    expect(jobIdFor('evt_a:b')).not.toBe(jobIdFor('evt_a%3Ab'))
  })
})
