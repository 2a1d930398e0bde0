import { bodyObject, Fields } from '../shared/fields.js'
import {
  APPROVAL_TYPES,
  isDecimal,
  PAYOUT_TYPES,
  PAYOUT_UNITS,
  type ProgramInput,
} from './catalogue.js'

type Body = Record<string, unknown>

/** Reads the optional fields of a program: absent becomes null, a wrong type is noted. */
function nullable(body: Body, fields: Fields) {
  return <T>(name: string, check: (value: unknown) => boolean, rule: string): T | null => {
    const value = body[name]
    if (value === undefined || value === null) return null
    if (!check(value)) fields.invalid(name, rule)
    return value as T
  }
}

const isString = (value: unknown) => typeof value === 'string'
const oneOf = (values: readonly string[]) => (value: unknown) =>
  typeof value === 'string' && values.includes(value)

/**
 * A program's fields as `POST /emulator/programs` and `--catalog` take them (the
 * network's view: `category` as sent, `networkPayout` before the service's cut),
 * or 400 with one entry per bad field. Absent fields are null; `payoutType`
 * defaults to `cps` (the API never shows it null).
 */
export function parseProgramInput(raw: unknown): ProgramInput {
  const body = bodyObject(raw)
  const fields = new Fields()
  const optional = nullable(body, fields)
  // The API's payoutType is never null; a network that does not say sells on commission.
  const payoutType = body.payoutType ?? 'cps'
  if (!oneOf(PAYOUT_TYPES)(payoutType)) {
    fields.invalid('payoutType', `must be one of ${PAYOUT_TYPES.join(', ')}`)
  }
  const payout = body.networkPayout
  const networkPayout =
    typeof payout === 'number' && Number.isFinite(payout) && payout >= 0
      ? String(payout)
      : (payout as string | null | undefined)
  if (networkPayout !== undefined && networkPayout !== null) {
    if (typeof networkPayout !== 'string' || !isDecimal(networkPayout)) {
      fields.invalid('networkPayout', 'must be a decimal number >= 0, such as "8.5"')
    }
  }
  const regions = body.regions ?? []
  if (
    !Array.isArray(regions) ||
    !regions.every((code) => typeof code === 'string' && /^[A-Z]{2}$/.test(code))
  ) {
    fields.invalid('regions', 'must be an array of ISO 3166-1 alpha-2 codes')
  }
  if (body.supportsDeepLinks !== undefined && typeof body.supportsDeepLinks !== 'boolean') {
    fields.invalid('supportsDeepLinks', 'must be true or false')
  }
  const input: ProgramInput = {
    merchantName: optional('merchantName', isString, 'must be a string'),
    merchantDomain: optional<string>('merchantDomain', isString, 'must be a string'),
    category: optional('category', isString, 'must be a string'),
    payoutType: payoutType as ProgramInput['payoutType'],
    networkPayout: networkPayout ?? null,
    payoutUnit: optional(
      'payoutUnit',
      oneOf(PAYOUT_UNITS),
      `must be one of ${PAYOUT_UNITS.join(', ')}`,
    ),
    currency: optional(
      'currency',
      (v) => isString(v) && /^[A-Z]{3}$/.test(v as string),
      'must be an ISO 4217 code',
    ),
    cookieDays: optional(
      'cookieDays',
      (v) => Number.isSafeInteger(v) && (v as number) >= 0,
      'must be a whole number of days',
    ),
    approvalType: optional(
      'approvalType',
      oneOf(APPROVAL_TYPES),
      `must be one of ${APPROVAL_TYPES.join(', ')}`,
    ),
    supportsDeepLinks: body.supportsDeepLinks === true,
    description: optional('description', isString, 'must be a string'),
    regions: Array.isArray(regions) ? (regions as string[]) : [],
    logoUrl: optional('logoUrl', isString, 'must be a string'),
  }
  fields.done()
  // The spec's merchantDomain is without `www.`.
  if (input.merchantDomain !== null) {
    input.merchantDomain = input.merchantDomain.toLowerCase().replace(/^www\./, '')
  }
  return input
}
