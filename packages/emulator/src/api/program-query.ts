import {
  APPLICATION_STATUSES,
  type ApplicationStatus,
  PROGRAM_STATUSES,
  type ProgramStatus,
} from '../account/applications.js'
import { APPROVAL_TYPES, PAYOUT_TYPES } from '../account/catalogue.js'
import { characterCount } from '../shared/characters.js'
import { bodyObject, Fields } from '../shared/fields.js'
import { readEnum, readPageQuery } from './validation.js'

/** Longest application note, in characters (code points, as every limit). */
export const MAX_NOTE_LENGTH = 500

/** An integer id from the query, or undefined; anything else is noted in `fields`. */
function readId(query: URLSearchParams, name: string, fields: Fields): number | undefined {
  const value = query.get(name)
  if (value === null) return undefined
  if (/^\d{1,15}$/.test(value)) return Number(value)
  fields.invalid(name, 'must be a whole number')
  return undefined
}

/** Filters and paging of `GET /v1/programs`. */
export interface ProgramQuery {
  page: number
  size: number
  search: string | undefined
  category: string | undefined
  payoutType: (typeof PAYOUT_TYPES)[number] | undefined
  approvalType: (typeof APPROVAL_TYPES)[number] | undefined
  channelId: number | undefined
  status: ProgramStatus | undefined
}

/** The query of `GET /v1/programs`, or 400 with one `invalid_format` per bad parameter. */
export function parseProgramQuery(query: URLSearchParams): ProgramQuery {
  const fields = new Fields()
  const text = (name: string) => {
    const value = query.get(name)?.trim()
    return value === undefined || value === '' ? undefined : value
  }
  const parsed: ProgramQuery = {
    ...readPageQuery(query, fields),
    search: text('search'),
    category: text('category'),
    payoutType: readEnum(query, 'payoutType', PAYOUT_TYPES, fields),
    approvalType: readEnum(query, 'approvalType', APPROVAL_TYPES, fields),
    channelId: readId(query, 'channelId', fields),
    status: readEnum(query, 'status', PROGRAM_STATUSES, fields),
  }
  fields.done()
  return parsed
}

/** `channelId` of `GET /v1/programs/{id}`, or 400. */
export function parseChannelParam(query: URLSearchParams): number | undefined {
  const fields = new Fields()
  const channelId = readId(query, 'channelId', fields)
  fields.done()
  return channelId
}

/** Filters and paging of `GET /v1/programs/applications`. */
export interface ApplicationQuery {
  page: number
  size: number
  status: ApplicationStatus | undefined
  programId: number | undefined
  channelId: number | undefined
}

/** The query of `GET /v1/programs/applications`, or 400. */
export function parseApplicationQuery(query: URLSearchParams): ApplicationQuery {
  const fields = new Fields()
  const parsed: ApplicationQuery = {
    ...readPageQuery(query, fields),
    status: readEnum(query, 'status', APPLICATION_STATUSES, fields),
    programId: readId(query, 'programId', fields),
    channelId: readId(query, 'channelId', fields),
  }
  fields.done()
  return parsed
}

/** Reads a required integer field of a body, noting it in `fields` when absent or not one. */
export function requiredInteger(body: Record<string, unknown>, name: string, fields: Fields) {
  const value = body[name]
  if (value === undefined || value === null) fields.required(name)
  else if (!Number.isSafeInteger(value)) fields.invalid(name, 'must be an integer')
  return value as number
}

/** The body of `POST /v1/programs/applications`: programId, channelId, note (not stored). */
export function parseApplicationInput(raw: unknown): { programId: number; channelId: number } {
  const body = bodyObject(raw)
  const fields = new Fields()
  const programId = requiredInteger(body, 'programId', fields)
  const channelId = requiredInteger(body, 'channelId', fields)
  if (body.note !== undefined && body.note !== null) {
    if (typeof body.note !== 'string') fields.invalid('note', 'must be a string')
    else if (characterCount(body.note) > MAX_NOTE_LENGTH) {
      fields.invalid('note', `must be at most ${MAX_NOTE_LENGTH} characters`)
    }
  }
  fields.done()
  return { programId, channelId }
}
