import { type Client, createClient, isServiceError } from '@affiliate-webhooks/client'
import { API_KEY_ENV, API_URL_ENV } from '@affiliate-webhooks/client/internal'
import type { ValuesOf } from '../../framework/command.js'
import { type Io, readFlagFile, SECRET_AS_KEY_HINT, UsageError } from '../../framework/io.js'
import { writeHint } from './hints.js'
import type { MANAGE_OPTIONS } from './manage-options.js'

/** The flags every management command has, as its handler gets them. */
type ManageValues = ValuesOf<typeof MANAGE_OPTIONS>

export const EXIT_MANAGE = { refused: 3, unavailable: 4 } as const

/** A client from the environment or the flags; a missing piece is a usage error. */
export async function clientFrom(values: ManageValues, io: Io): Promise<Client> {
  if (values['api-key'] !== undefined) {
    throw new UsageError(
      `--api-key is not accepted: a key on the command line lands in shell history; set ${API_KEY_ENV} or use --api-key-file`,
    )
  }
  const file = values['api-key-file']
  const apiKey = file === undefined ? io.env[API_KEY_ENV] : await readFlagFile('api-key-file', file)
  const baseUrl = values['api-url'] ?? io.env[API_URL_ENV]
  if (!apiKey) throw new UsageError(`no API key: set ${API_KEY_ENV} or pass --api-key-file FILE`)
  if (apiKey.startsWith('whsec_')) {
    throw new UsageError(`${API_KEY_ENV} holds an endpoint secret (whsec_...), not an API key`, {
      hint: SECRET_AS_KEY_HINT,
    })
  }
  if (!baseUrl) throw new UsageError(`no service address: set ${API_URL_ENV} or pass --api-url URL`)
  try {
    return createClient({ apiKey, baseUrl })
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^affiliate-webhooks client: /, ''))
  }
}

/**
 * Runs a management command: a refusal or failure of the service becomes one
 * line and its exit code; anything else one line too, with the stack only under --debug.
 */
export async function managed(
  name: string,
  values: ManageValues,
  io: Io,
  run: () => Promise<number>,
): Promise<number> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof UsageError) throw error
    if (isServiceError(error)) {
      io.stderr.write(`affiliate-webhooks ${name}: ${error.message}\n`)
      writeHint(io, 'service', error.message)
      if (values.debug && error.stack) io.stderr.write(`${error.stack}\n`)
      return error.status >= 400 && error.status < 500 && error.code !== 'invalid_response'
        ? EXIT_MANAGE.refused
        : EXIT_MANAGE.unavailable
    }
    const message = error instanceof Error ? error.message : String(error)
    io.stderr.write(`affiliate-webhooks ${name}: ${message}\n`)
    writeHint(io, 'service', message)
    if (values.debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`)
    return EXIT_MANAGE.unavailable
  }
}

/** A client from the flags ({@link clientFrom}), then `run` with it under {@link managed}. */
export async function withClient(
  name: string,
  values: ManageValues,
  io: Io,
  run: (api: Client) => Promise<number>,
): Promise<number> {
  const api = await clientFrom(values, io)
  return managed(name, values, io, () => run(api))
}

/** The arguments a command expects, or a usage error naming the missing one. */
export function positional(positionals: readonly string[], index: number, what: string): string {
  const value = positionals[index]
  if (value === undefined || value === '') throw new UsageError(`missing ${what}`)
  return value
}

/** The one argument a command takes (an endpoint id); a second is a usage error. */
export function onlyArgument(positionals: readonly string[], what: string): string {
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
  return positional(positionals, 0, what)
}

/** `--since` parsed, or undefined when not given. */
export const sinceOf = (values: { since?: string }): Date | undefined =>
  values.since === undefined ? undefined : parseSince(values.since)

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `90s`, `10m`, `2h`, `3d` in ms. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(text.trim())
  if (!match)
    throw new UsageError(`--${flag} must be a duration like 90s, 10m, 2h or 3d, not "${text}"`)
  return Number(match[1]) * (UNITS[match[2] as string] as number)
}

/** `--since`: an ISO time, or a duration back from now (`2h` = two hours ago). */
export function parseSince(text: string, now = Date.now()): Date {
  if (/^\d+(?:\.\d+)?[smhd]$/.test(text.trim())) return new Date(now - parseDuration('since', text))
  const time = Date.parse(text)
  if (!Number.isFinite(time) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new UsageError(
      `--since must be an ISO time (2026-11-20T08:00:00Z) or a duration back from now (2h), not "${text}"`,
    )
  }
  return new Date(time)
}
