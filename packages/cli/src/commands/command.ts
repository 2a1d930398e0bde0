import type { ParseArgsConfig } from 'node:util'
import type { Io } from './io.js'

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>
/** Parsed flags; a flag given with `multiple: true` is an array. */
export type Values = Record<string, string | boolean | string[] | undefined>

export interface Command {
  name: string
  /** One line for the command list. */
  summary: string
  /** Full `--help` text. */
  help: string
  options: OptionsConfig
  /** Takes arguments besides options (an endpoint id, a sub-command). */
  positionals?: boolean
  /** Returns the exit code; throws UsageError for wrong input. */
  run(values: Values, io: Io, positionals: readonly string[]): Promise<number>
}

/** Flags several commands share, with the same meaning everywhere. */
export const COMMON = {
  secret: { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies OptionsConfig

export const str = (values: Values, name: string): string | undefined => {
  const value = values[name]
  return typeof value === 'string' ? value : undefined
}

/** The CLI's version, printed by --version and sent in its User-Agent. */
export const VERSION = '0.1.0'
