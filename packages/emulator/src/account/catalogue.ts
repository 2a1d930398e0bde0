import { APPROVAL_TYPES, PAYOUT_TYPES } from '@affiliate-webhooks/core/internal'
import { ApiError } from '../shared/api-error.js'

// The spec's lists, one copy: the client declares them.
export { APPROVAL_TYPES, PAYOUT_TYPES }

/** The publisher's share of the network's rate: the service keeps 30%. */
export const PUBLISHER_SHARE_PERCENT = 70

/** `percent` (revenue share) or `fixed` (flat amount). */
export const PAYOUT_UNITS = ['percent', 'fixed'] as const

/** A merchant program as the network describes it, before the service's cut. */
export interface ProgramInput {
  merchantName: string | null
  merchantDomain: string | null
  /** As the network sends it ("Home &amp; Garden"); the API shows its slug. */
  category: string | null
  payoutType: (typeof PAYOUT_TYPES)[number]
  /** The network's rate, a decimal string; the API shows 70% of it. */
  networkPayout: string | null
  payoutUnit: (typeof PAYOUT_UNITS)[number] | null
  currency: string | null
  cookieDays: number | null
  approvalType: (typeof APPROVAL_TYPES)[number] | null
  supportsDeepLinks: boolean
  description: string | null
  regions: string[]
  logoUrl: string | null
}

/** A program of the catalogue. */
export interface Program extends ProgramInput {
  id: number
  /** Service time it was added, epoch ms: lists are newest first. */
  createdAt: number
  /** False once removed or deactivated: gone from the list, 404 on retrieve. */
  active: boolean
}

/**
 * The spec's category slug: lowercased, `&` decoded, every run of other
 * characters turned into `_`. "Home &amp; Garden" -> `home_garden`.
 */
export function categorySlug(category: string): string {
  return category
    .replace(/&amp;|&#0*38;|&#x0*26;/gi, '&')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
}

const DECIMAL = /^\d{1,12}(\.\d{1,6})?$/

/** True for a non-negative decimal string the payout arithmetic takes. */
export const isDecimal = (value: string): boolean => DECIMAL.test(value)

/**
 * 70% of the network's rate as a two-decimal string, rounded half up, in
 * integer arithmetic (no binary fractions): `"10"` -> `"7.00"`, `"0.35"` -> `"0.25"`.
 */
export function publisherPayout(networkPayout: string): string {
  if (!isDecimal(networkPayout)) throw new TypeError(`not a decimal: ${networkPayout}`)
  const [whole = '0', fraction = ''] = networkPayout.split('.')
  const micros = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'))
  // micros * 70 / 100 is the share in micros; cents = that / 10_000, half up.
  const scaled = micros * BigInt(PUBLISHER_SHARE_PERCENT)
  const cents = (scaled + 500_000n) / 1_000_000n
  return `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`
}

/** A program as the API shows it; `retrieve` adds description, regions and logoUrl. */
export function programJson(program: Program, status: string, retrieve: boolean) {
  return {
    id: program.id,
    merchantName: program.merchantName,
    merchantDomain: program.merchantDomain,
    category: program.category === null ? null : categorySlug(program.category),
    payoutType: program.payoutType,
    payout: program.networkPayout === null ? null : publisherPayout(program.networkPayout),
    payoutUnit: program.payoutUnit,
    currency: program.currency,
    cookieDays: program.cookieDays,
    approvalType: program.approvalType,
    status,
    supportsDeepLinks: program.supportsDeepLinks,
    ...(retrieve
      ? { description: program.description, regions: program.regions, logoUrl: program.logoUrl }
      : {}),
  }
}

/** The catalogue of merchant programs: add, deactivate, look up, list newest first. */
export function createCatalogue(now: () => number, initial: readonly Program[] = []) {
  const programs = new Map<number, Program>(initial.map((program) => [program.id, program]))
  let nextId = Math.max(100, ...initial.map((program) => program.id + 1))
  return {
    add(input: ProgramInput): Program {
      const program: Program = { ...input, id: nextId++, createdAt: now(), active: true }
      programs.set(program.id, program)
      return program
    },
    /** A live program, or 404 `program_not_found` (unknown and removed look alike). */
    get(id: number): Program {
      const program = programs.get(id)
      if (!program?.active) throw new ApiError('program_not_found', `No program ${id}.`)
      return program
    },
    /** Any program ever in the catalogue, live or not (merchant names of old applications). */
    find: (id: number): Program | undefined => programs.get(id),
    deactivate(id: number): Program {
      const program = this.get(id)
      program.active = false
      return program
    },
    /** Every program, removed ones too, for the state file. */
    all: (): Program[] => [...programs.values()],
    /** Live programs, newest first (then highest id first). */
    list: (): Program[] =>
      [...programs.values()]
        .filter((program) => program.active)
        .sort((a, b) => b.createdAt - a.createdAt || b.id - a.id),
  }
}

/** What {@link createCatalogue} returns. */
export type Catalogue = ReturnType<typeof createCatalogue>
