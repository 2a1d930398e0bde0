/**
 * `@affiliate-webhooks/bullmq/internal`: what the CLI's `queue` command shares
 * with this package and no user calls: a queue opened for inspection on a
 * connection that fails at once, beside the admin calls it runs. Shared by
 * sibling packages only; not covered by semver: any release may change or
 * remove a name here. Users import `@affiliate-webhooks/bullmq`.
 *
 * @packageDocumentation
 */
export { failedJobs, openQueueForAdmin, queueStats, retryFailed } from './admin.js'
