import type { Io } from './io.js'

/**
 * One flag, declared once: parseArgs reads `type`, `short` and `multiple`; the
 * help text is made from `value` and `help`. A flag without `help` is accepted
 * but not listed (one kept only to refuse it with a reason).
 */
export interface OptionSpec {
  type: 'string' | 'boolean'
  short?: string
  multiple?: boolean
  /** The placeholder shown after the flag: `--port N`. */
  value?: string
  /** What the flag does; a newline starts an indented continuation line. */
  help?: string
  /** A number flag: checked (and made a number) before the command runs. */
  number?: { min?: number; max?: number; integer?: boolean }
}
export type OptionsConfig = Record<string, OptionSpec>

/** Listed flags, declared in one line each: the placeholder, the help, a number's rule. */
export const flag = {
  /** `--name VALUE`: takes a value. */
  text: (value: string, help: string): OptionSpec => ({ type: 'string', value, help }),
  /** `--name N`: a number, checked against `rule` before the command runs. */
  number: (value: string, help: string, rule: NonNullable<OptionSpec['number']>): OptionSpec => ({
    type: 'string',
    value,
    help,
    number: rule,
  }),
  /** `--name`: a switch. */
  bool: (help: string): OptionSpec => ({ type: 'boolean', help }),
}
/** Parsed flags; a flag given with `multiple: true` is an array. */
export type Values = Record<string, string | number | boolean | string[] | undefined>

export interface Command {
  name: string
  /** One line for the command list. */
  summary: string
  /** Each way to call it, after the program's name (the first line of --help). */
  usage: readonly string[]
  /** What it does: the paragraph(s) between the usage and the flags. */
  about: string
  options: OptionsConfig
  /** Text after the flags: examples, exit codes. */
  footer?: string
  /** Takes arguments besides options (an endpoint id, a sub-command). */
  positionals?: boolean
  /** Returns the exit code; throws UsageError for wrong input. */
  run(values: Values, io: Io, positionals: readonly string[]): Promise<number>
}

export const BIN = 'affiliate-webhooks'

/** The flag column of --help: `--name VALUE`. */
const flagLabel = (name: string, spec: OptionSpec): string =>
  `--${name}${spec.value ? ` ${spec.value}` : ''}`

/** A command's --help, made from its declaration. */
export function helpText(command: Command): string {
  const [first = command.name, ...more] = command.usage
  const usage = [`Usage: ${BIN} ${first}`, ...more.map((line) => `       ${BIN} ${line}`)]
  const listed = Object.entries(command.options).filter(([, spec]) => spec.help !== undefined)
  const width = Math.max(0, ...listed.map(([name, spec]) => flagLabel(name, spec).length)) + 3
  const flags = listed.flatMap(([name, spec]) => {
    const [line, ...rest] = (spec.help ?? '').split('\n')
    return [
      `  ${flagLabel(name, spec).padEnd(width)}${line}`,
      ...rest.map((text) => `  ${' '.repeat(width)}${text}`),
    ]
  })
  const parts = [usage.join('\n'), command.about, flags.join('\n'), command.footer ?? '']
  return parts.filter((part) => part !== '').join('\n\n')
}

/** What node:util's parseArgs takes from the declarations. */
export function parseOptions(options: OptionsConfig) {
  return Object.fromEntries(
    Object.entries(options).map(([name, { type, short, multiple }]) => [
      name,
      { type, ...(short ? { short } : {}), ...(multiple ? { multiple } : {}) },
    ]),
  )
}

/** Flags several commands share, with the same meaning everywhere. */
export const COMMON = {
  secret: flag.text('SECRET', 'endpoint secret (whsec_...); default $AFFILIATE_WEBHOOK_SECRET'),
} as const satisfies OptionsConfig

/** A number flag's value (see {@link OptionSpec.number}), or undefined when absent. */
export const num = (values: Values, name: string): number | undefined => {
  const value = values[name]
  return typeof value === 'number' ? value : undefined
}

/** `--port` and `--host` of a command that listens, declared once. */
export const listenOptions = (defaultPort: number) =>
  ({
    port: flag.number('N', `port to listen on (default ${defaultPort}; 0 picks a free one)`, {
      min: 0,
      max: 65535,
      integer: true,
    }),
    host: flag.text('HOST', 'address to listen on (default 127.0.0.1)'),
  }) as const satisfies OptionsConfig

export const str = (values: Values, name: string): string | undefined => {
  const value = values[name]
  return typeof value === 'string' ? value : undefined
}

/** The CLI's version, printed by --version and sent in its User-Agent. */
export const VERSION = '0.1.0'
