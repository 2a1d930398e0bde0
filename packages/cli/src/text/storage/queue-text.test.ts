import { JOB_STATES, type QueueStats } from '@affiliate-webhooks/bullmq'
import { describe, expect, it } from 'vitest'
import { formatFailedJobs, formatQueueStats } from './queue-text.js'

describe('queue admin as text', () => {
  it('one state and its count a line, in the order of JOB_STATES', () => {
    const stats = Object.fromEntries(JOB_STATES.map((state, i) => [state, i])) as QueueStats
    const lines = formatQueueStats(stats).split('\n')
    expect(lines).toHaveLength(JOB_STATES.length)
    expect(lines[0]).toBe(`${JOB_STATES[0].padEnd(12)}0`)
  })

  it('failed jobs by event id (or job id), conversion, tries and last error; none said so', () => {
    const job = {
      jobId: 'j1',
      eventId: 'evt_1',
      conversionId: 1001,
      type: 'conversion.created',
      attemptsMade: 3,
      error: 'db down',
      failedAt: null,
    }
    expect(formatFailedJobs([job, { ...job, eventId: null, conversionId: null }])).toBe(
      'evt_1  conversion 1001  tries 3  db down\nj1  conversion -  tries 3  db down',
    )
    expect(formatFailedJobs([])).toBe('no failed jobs')
  })
})
