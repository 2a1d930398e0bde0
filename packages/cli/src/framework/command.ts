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
  number?: NumberRule
}

/** What a number flag accepts. */
export interface NumberRule {
  min?: number
  max?: number
  integer?: boolean
  /** The word `off` is accepted too, as Infinity (no limit). */
  off?: boolean
  /** Printed as `hint:` under the error when the value is refused. */
  hint?: string
}
export type OptionsConfig = Record<string, OptionSpec>

/** Listed flags, declared in one line each: the placeholder, the help, a number's rule. */
export const flag = {
  /** `--name VALUE`: takes a value. */
  text: (value: string, help: string) => ({ type: 'string', value, help }) as const,
  /** `--name N`: a number, checked against `rule` before the command runs. */
  number: (value: string, help: string, rule: NumberRule) =>
    ({ type: 'string', value, help, number: rule }) as const,
  /** `--name`: a switch. */
  bool: (help: string) => ({ type: 'boolean', help }) as const,
}

/** What the handler gets for one flag: a number flag a number, a switch a boolean, a list an array. */
export type ValueOf<S extends OptionSpec> = S extends { readonly number: object }
  ? number
  : S extends { readonly type: 'boolean' }
    ? boolean
    : S extends { readonly multiple: true }
      ? string[]
      : string

/** The parsed flags of a command, typed from its declaration: a misspelt flag is a type error. */
export type ValuesOf<O extends OptionsConfig> = { [K in keyof O]?: ValueOf<O[K]> }

/** Parsed flags of any command (what the parser hands over before the handler's type applies). */
export type Values = Record<string, string | number | boolean | string[] | undefined>

/**
 * A command's declaration: what help, completion and parsing read, and nothing
 * else. Its name and summary are in the command table (the top-level --help reads
 * only those), the rest in a module of its own, imported when the command is
 * named; its code is a third module, imported when it runs.
 */
export interface CommandSpec<O extends OptionsConfig = OptionsConfig> {
  /** Each way to call it, after the program's name (the first line of --help). */
  usage: readonly string[]
  /** What it does: the paragraph(s) between the usage and the flags. */
  about: string
  options: O
  /** Text after the flags: examples, exit codes. */
  footer?: string
  /** Takes arguments besides options (an endpoint id, an action). */
  positionals?: boolean
  /** The words its first argument may be (`endpoints list`, `get` ...): completion offers them. */
  actions?: readonly string[]
  /** Its arguments include an endpoint id: completion asks the service for them. */
  endpointIds?: boolean
  /** Commands below it, each declared like the others (`emulator clock`). */
  subcommands?: readonly Command[]
}

/** A command's code: returns the exit code; throws UsageError for wrong input. */
export type Handler<O extends OptionsConfig> = (
  values: ValuesOf<O>,
  io: Io,
  positionals: readonly string[],
) => Promise<number>

/** The code of a command once imported (a method, so one table holds every command's). */
export interface Loaded<O extends OptionsConfig> {
  run(values: ValuesOf<O>, io: Io, positionals: readonly string[]): Promise<number>
}

/** A row of the command table: name and summary, then the declaration and the code, each imported when needed. */
export interface Command<O extends OptionsConfig = OptionsConfig> {
  name: string
  /** One line for the command list. */
  summary: string
  /** Imports the declaration (`<command> --help`, parsing, completion). */
  spec(): Promise<CommandSpec<O>>
  /** Imports the code (the command runs). */
  load(): Promise<Loaded<O>>
}

/** A declaration, its flags' types kept exactly as written. */
export const defineCommand = <const O extends OptionsConfig>(
  spec: CommandSpec<O>,
): CommandSpec<O> => spec

/**
 * A row of the command table. The handler's flags are typed from the declaration
 * the same row imports: a handler reading a flag the declaration lacks fails typecheck.
 */
export const command = <O extends OptionsConfig>(
  name: string,
  summary: string,
  spec: () => Promise<CommandSpec<O>>,
  load: () => Promise<Handler<O>>,
): Command<O> => ({ name, summary, spec, load: async () => ({ run: await load() }) })

export const BIN = 'affiliate-webhooks'

/** The flag column of --help: `--name VALUE`. */
const flagLabel = (name: string, spec: OptionSpec): string =>
  `--${name}${spec.value ? ` ${spec.value}` : ''}`

/** A command's --help, made from its declaration. */
export function helpText(name: string, command: CommandSpec): string {
  const [first = name, ...more] = command.usage
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
