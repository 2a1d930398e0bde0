import { readFile } from 'node:fs/promises'

/** What a command may touch: streams and environment, so tests can run it in-process. */
export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean }
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number }
  stdin: AsyncIterable<Uint8Array | string> & { isTTY?: boolean }
  env: Readonly<Record<string, string | undefined>>
  /** Fires on Ctrl-C while a long command runs. */
  onInterrupt?: (listener: () => void) => () => void
}

/** Wrong flags or inputs: exit code 2, with the command's usage hint. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  /** The usual cause and what to do, printed on the line after the error. */
  readonly hint: string | undefined
  constructor(message: string, options: { hint?: string } = {}) {
    super(message)
    this.hint = options.hint
  }
}

/** A package the command needs is not installed: one line naming what to install, exit code 2. */
export class MissingPackageError extends Error {
  override readonly name = 'MissingPackageError'
}

/** The hint when an API key (la_...) stands where the endpoint secret belongs. */
export const KEY_AS_SECRET_HINT =
  'that is an API key (la_...), not the endpoint secret (whsec_...): endpoints create --show-secret prints the secret'

/** The hint when an endpoint secret (whsec_...) stands where the API key belongs. */
export const SECRET_AS_KEY_HINT =
  "that is an endpoint secret (whsec_...), not the account's API key (la_...): the emulator's banner prints the key; the secret goes in AFFILIATE_WEBHOOK_SECRET"

export const EXIT = {
  /** It verified, it was acknowledged, every delivery succeeded. */
  ok: 0,
  /** The answer is no: does not verify, not acknowledged, a delivery failed. */
  failed: 1,
  /** The command could not run as given. */
  usage: 2,
  /** Stopped with Ctrl-C. */
  interrupted: 130,
} as const

export const SECRET_ENV = 'AFFILIATE_WEBHOOK_SECRET'

export function requireSecret(flag: string | undefined, io: Io): string {
  const secret = flag ?? io.env[SECRET_ENV]
  if (secret === undefined || secret === '') {
    throw new UsageError(`no secret: pass --secret whsec_... or set ${SECRET_ENV}`)
  }
  return secret
}

/** A note on stderr when a secret does not look like an endpoint secret. */
export function checkSecretShape(secret: string, io: Io): void {
  if (secret.startsWith('la_')) {
    io.stderr.write(`hint: ${KEY_AS_SECRET_HINT}.\n`)
  } else if (!secret.startsWith('whsec_')) {
    io.stderr.write(
      'note: endpoint secrets start with whsec_; the whole string, prefix included, is the HMAC key.\n',
    )
  }
}

/** The trimmed contents of a file named by `--flag`; a file it cannot read is a usage error. */
export async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(
      `cannot read --${flag} ${path}: ${code === 'ENOENT' ? 'no such file' : code}`,
    )
  }
}

export function requireUrl(flag: string | undefined, name = '--url'): string {
  if (flag === undefined || flag === '') {
    throw new UsageError(
      `${name} is required: the webhook URL of your receiver, e.g. http://localhost:3000/hooks`,
    )
  }
  let url: URL
  try {
    url = new URL(flag)
  } catch {
    throw new UsageError(
      `${name} ${flag} is not an absolute URL (e.g. http://localhost:3000/hooks)`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${name} must be http:// or https://, not ${url.protocol}`)
  }
  return url.href
}

/**
 * A number flag's text checked against its rule: `--name must be a whole number from 1 to 8`.
 * With `off` in the rule, the word `off` is Infinity.
 */
export function parseNumber(
  name: string,
  value: string,
  rule: { min?: number; max?: number; integer?: boolean; off?: boolean; hint?: string } = {},
): number {
  if (rule.off && value.trim().toLowerCase() === 'off') return Number.POSITIVE_INFINITY
  const number = Number(value)
  const { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = false } = rule
  if (
    value.trim() === '' ||
    !Number.isFinite(number) ||
    number < min ||
    number > max ||
    (integer && !Number.isInteger(number))
  ) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${max}`
    throw new UsageError(
      `--${name} must be ${integer ? 'a whole number' : 'a number'} ${range}${rule.off ? ' or off' : ''}, not "${value}"`,
      rule.hint ? { hint: rule.hint } : {},
    )
  }
  return number
}

/** Reads `--body FILE`, or stdin for `-` or no flag. Exact bytes: nothing trimmed or decoded. */
export async function readInputFile(path: string | undefined, io: Io): Promise<Uint8Array> {
  if (path !== undefined && path !== '-') {
    try {
      return new Uint8Array(await readFile(path))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new UsageError(
        `cannot read --body ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      )
    }
  }
  if (io.stdin.isTTY) {
    throw new UsageError('no body: pass --body FILE, or pipe the body in (--body - reads stdin)')
  }
  const chunks: Uint8Array[] = []
  for await (const chunk of io.stdin) {
    chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk)
  }
  return new Uint8Array(Buffer.concat(chunks))
}

export const writeJson = (io: Io, value: unknown): void => {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

/** What a command with `--json` prints: the value as JSON with the flag (`values.json`), else the text. */
export function output(
  io: Io,
  values: { readonly json?: unknown },
  value: unknown,
  text: string,
): void {
  if (values.json) writeJson(io, value)
  else io.stdout.write(`${text}\n`)
}

/**
 * A usage error when any of `flags` was given: `<why>; leave out --a, --b`.
 * `values` are a command's parsed flags (typed by shape: this file imports nothing of command.ts).
 */
export function refuseFlags(values: object, flags: readonly string[], why: string): void {
  const given = flags.filter((flag) => flag in values)
  if (given.length > 0) throw new UsageError(`${why}; leave out --${given.join(', --')}`)
}

/** Resolves at Ctrl-C: how a command that serves (emulator, listen) ends. */
export const untilInterrupted = (io: Io): Promise<void> =>
  new Promise((resolve) => {
    const stop = io.onInterrupt?.(() => {
      stop?.()
      resolve()
    })
  })

/** Runs `run` with an AbortSignal that Ctrl-C fires, and stops listening for Ctrl-C after. */
export async function interruptible<T>(io: Io, run: (signal: AbortSignal) => Promise<T>) {
  const controller = new AbortController()
  const off = io.onInterrupt?.(() => controller.abort(new Error('interrupted')))
  try {
    return await run(controller.signal)
  } finally {
    off?.()
  }
}
