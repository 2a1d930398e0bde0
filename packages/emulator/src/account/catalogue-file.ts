import { readFileSync } from 'node:fs'
import { isApiError } from '../shared/api-error.js'
import { isObject } from '../shared/fields.js'
import type { CatalogueSeed } from './default-catalogue.js'
import { parseProgramInput } from './program-input.js'

/**
 * A catalogue file for `--catalog FILE`: `{ "programs": [...], "channels": [...] }`
 * (channels optional: the default channel is used) or a plain array of
 * programs, each with the fields `POST /emulator/programs` takes and an
 * optional `id`. Throws an Error naming the file, the entry and the field.
 */
export function readCatalogueFile(
  path: string,
  fallbackChannels: CatalogueSeed['channels'],
): CatalogueSeed {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new Error(`catalogue ${path}: ${(error as Error).message}`)
  }
  const body = Array.isArray(parsed) ? { programs: parsed } : parsed
  if (!isObject(body) || !Array.isArray(body.programs)) {
    throw new Error(`catalogue ${path}: expected {"programs": [...]} or an array of programs`)
  }
  const programs = body.programs.map((entry: unknown, index: number) => {
    try {
      const input = parseProgramInput(entry)
      const id = isObject(entry) ? entry.id : undefined
      if (id !== undefined && !(Number.isSafeInteger(id) && (id as number) > 0)) {
        throw new Error('id must be a whole number > 0')
      }
      return id === undefined ? input : { ...input, id: id as number }
    } catch (error) {
      const why = isApiError(error)
        ? (error.fields ?? []).map((field) => field.message).join(' ')
        : (error as Error).message
      throw new Error(`catalogue ${path}: program ${index + 1}: ${why}`)
    }
  })
  return { programs, channels: readChannels(path, body.channels) ?? fallbackChannels }
}

function readChannels(path: string, raw: unknown): CatalogueSeed['channels'] | undefined {
  if (raw === undefined) return undefined
  if (!Array.isArray(raw)) throw new Error(`catalogue ${path}: channels must be an array`)
  return raw.map((entry: unknown, index) => {
    if (
      !isObject(entry) ||
      typeof entry.domain !== 'string' ||
      typeof entry.approved !== 'boolean' ||
      typeof entry.verified !== 'boolean' ||
      (entry.id !== undefined && !Number.isSafeInteger(entry.id))
    ) {
      throw new Error(
        `catalogue ${path}: channel ${index + 1} needs domain (string), approved and verified (true or false), and an optional integer id`,
      )
    }
    return {
      domain: entry.domain,
      approved: entry.approved,
      verified: entry.verified,
      ...(entry.id === undefined ? {} : { id: entry.id as number }),
    }
  })
}
