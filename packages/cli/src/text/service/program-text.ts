/**
 * Programs and applications as people read them on a terminal: what
 * `affiliate-webhooks programs`, `apply` and `applications` print.
 */
import type {
  Application,
  ApplicationListEntry,
  Program,
  ProgramSummary,
} from '@affiliate-webhooks/client'
import { formatRows, formatTable } from '../table.js'

/** The payout as people read it: `7.00%`, `31.50 EUR`, or `-` when the network gives none. */
export function payoutText(program: ProgramSummary): string {
  if (program.payout === null) return '-'
  if (program.payoutUnit === 'percent') return `${program.payout}%`
  return `${program.payout}${program.currency ? ` ${program.currency}` : ''}`
}

const dash = (value: string | number | null | undefined) =>
  value === null || value === undefined || value === '' ? '-' : String(value)

/** Programs as a table: merchant, category, payout, cookie, approval, your status. */
export function formatPrograms(programs: readonly ProgramSummary[]): string {
  if (programs.length === 0) return 'no programs match'
  return formatTable(
    ['ID', 'MERCHANT', 'CATEGORY', 'TYPE', 'PAYOUT', 'COOKIE', 'APPROVAL', 'STATUS'],
    programs.map((p) => [
      String(p.id),
      dash(p.merchantName),
      dash(p.category),
      p.payoutType,
      payoutText(p),
      p.cookieDays === null ? '-' : `${p.cookieDays}d`,
      dash(p.approvalType),
      p.status,
    ]),
  )
}

/** One program as rows of name and value. */
export function formatProgram(program: Program): string {
  return formatRows([
    ['id', String(program.id)],
    ['merchant', dash(program.merchantName)],
    ['domain', dash(program.merchantDomain)],
    ['category', dash(program.category)],
    ['payout', `${payoutText(program)} (${program.payoutType})`],
    ['cookie', program.cookieDays === null ? '-' : `${program.cookieDays} days`],
    ['approval', dash(program.approvalType)],
    ['status', program.status],
    ['deep links', program.supportsDeepLinks ? 'yes' : 'no'],
    ['regions', program.regions.length > 0 ? program.regions.join(', ') : '-'],
    ['description', dash(program.description)],
    ['logo', dash(program.logoUrl)],
  ])
}

/** Applications as a table, or how to make the first. */
export function formatApplications(applications: readonly ApplicationListEntry[]): string {
  if (applications.length === 0)
    return 'no applications (affiliate-webhooks apply <programId> --channel <id>)'
  return formatTable(
    ['APPLICATION', 'PROGRAM', 'MERCHANT', 'CHANNEL', 'STATUS', 'APPLIED', 'DECIDED'],
    applications.map((a) => [
      String(a.applicationId),
      dash(a.programId as number | undefined),
      dash(a.merchantName),
      dash(a.channelId as number | undefined),
      a.status,
      a.appliedAt,
      dash(a.decidedAt),
    ]),
  )
}

/** What `apply` prints: the outcome first. */
export function formatApplied(
  application: Application,
  programId: number,
  channelId: number,
): string {
  const what = `program ${programId} on channel ${channelId}`
  return application.status === 'approved'
    ? `approved: ${what} (application ${application.applicationId}); tracking links can be minted now`
    : `${application.status}: ${what} (application ${application.applicationId}); the team reviews it`
}
