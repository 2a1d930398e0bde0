import { APPLICATION_STATUSES, PROGRAM_STATUSES } from '@affiliate-webhooks/core/internal'
import { ApiError } from '../shared/api-error.js'
import type { Catalogue, Program } from './catalogue.js'
import type { Channels } from './channels.js'

// The spec's lists, one copy: core declares them.
export { APPLICATION_STATUSES, PROGRAM_STATUSES }
/** A state of {@link APPLICATION_STATUSES}. */
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number]

/** A state of {@link PROGRAM_STATUSES}. */
export type ProgramStatus = (typeof PROGRAM_STATUSES)[number]

// Across several channels the program shows the most advanced state: one that
// can carry links, then one on its way there, then the ended ones.
const RANK: readonly ProgramStatus[] = [
  'approved',
  'pending',
  'paused',
  'suspended',
  'expired',
  'rejected',
  'not_applied',
]

/** One application of a channel to a program. */
export interface Application {
  applicationId: number
  programId: number
  channelId: number
  status: ApplicationStatus
  appliedAt: number
  decidedAt: number | null
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** The application object as the API shows it; the list adds `merchantName`. */
export function applicationJson(application: Application, merchantName?: string | null) {
  return {
    applicationId: application.applicationId,
    programId: application.programId,
    channelId: application.channelId,
    status: application.status,
    appliedAt: iso(application.appliedAt),
    decidedAt: iso(application.decidedAt),
    rejectionReason: null,
    ...(merchantName === undefined ? {} : { merchantName }),
  }
}

/** The spec's application state table, per program and channel. */
export function createApplications(
  catalogue: Catalogue,
  channels: Channels,
  now: () => number,
  initial: readonly Application[] = [],
) {
  const byId = new Map<number, Application>(initial.map((a) => [a.applicationId, a]))
  let nextId = Math.max(5000, ...initial.map((a) => a.applicationId + 1))
  const find = (programId: number, channelId: number) =>
    [...byId.values()].find(
      (application) => application.programId === programId && application.channelId === channelId,
    )

  return {
    /**
     * `POST /v1/programs/applications`: 404 `program_not_found`, 404
     * `channel_not_found`, 403 `channel_not_verified`, 409 `duplicate_application`
     * (with the existing one's id and status), in that order. An `auto` program
     * is approved at once (decidedAt = appliedAt); a `manual` one waits.
     */
    apply(programId: number, channelId: number): Application {
      const program = catalogue.get(programId)
      const channel = channels.own(channelId)
      if (!channel.approved || !channel.verified) {
        throw new ApiError(
          'channel_not_verified',
          `Channel ${channelId} is ${channel.approved ? 'not verified yet' : 'not approved yet'}: it cannot apply to programs.`,
        )
      }
      const existing = find(programId, channelId)
      if (existing) {
        throw new ApiError(
          'duplicate_application',
          `Channel ${channelId} already applied to program ${programId} (${existing.status}); a rejection cannot be re-applied through the API.`,
          { extra: { applicationId: existing.applicationId, status: existing.status } },
        )
      }
      const at = now()
      const auto = program.approvalType === 'auto'
      const application: Application = {
        applicationId: nextId++,
        programId,
        channelId,
        status: auto ? 'approved' : 'pending',
        appliedAt: at,
        decidedAt: auto ? at : null,
      }
      byId.set(application.applicationId, application)
      return application
    },
    /** The team's review of a pending application: approved or rejected, decidedAt now. */
    decide(applicationId: number, status: 'approved' | 'rejected'): Application {
      const application = byId.get(applicationId)
      if (!application) {
        throw new ApiError('application_not_found', `No application ${applicationId}.`)
      }
      if (application.status !== 'pending') {
        throw new ApiError(
          'application_not_pending',
          `Application ${applicationId} is ${application.status}; only a pending one is reviewed.`,
        )
      }
      application.status = status
      application.decidedAt = now()
      return application
    },
    /** Every application, newest first. */
    list: (): Application[] =>
      [...byId.values()].sort(
        (a, b) => b.appliedAt - a.appliedAt || b.applicationId - a.applicationId,
      ),
    /** The program's status on one channel, or the best across all the caller's channels. */
    statusOf(program: Program, channelId: number | undefined): ProgramStatus {
      const states = (channelId === undefined ? channels.list().map((c) => c.id) : [channelId]).map(
        (id): ProgramStatus => find(program.id, id)?.status ?? 'not_applied',
      )
      return RANK.find((status) => states.includes(status)) ?? 'not_applied'
    },
  }
}

/** What {@link createApplications} returns. */
export type Applications = ReturnType<typeof createApplications>
