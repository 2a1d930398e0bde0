/** The BullMQ hand-off queue as people read it: what `affiliate-webhooks queue` prints. */
import type { FailedJob, QueueStats } from '@affiliate-webhooks/bullmq'

/** Queue counts as people read them: one state and its count a line. */
export const formatQueueStats = (stats: QueueStats): string =>
  Object.entries(stats)
    .map(([state, n]) => `${state.padEnd(12)}${n}`)
    .join('\n')

/** Failed jobs as people read them: event id (or job id), conversion, tries, last error. */
export function formatFailedJobs(jobs: readonly FailedJob[]): string {
  if (jobs.length === 0) return 'no failed jobs'
  return jobs
    .map((job) => {
      const conversion = job.conversionId === null ? '-' : String(job.conversionId)
      return `${job.eventId ?? job.jobId}  conversion ${conversion}  tries ${job.attemptsMade}  ${job.error}`
    })
    .join('\n')
}
