import { parseArgs } from 'node:util'
import { COMMANDS } from './commands/index.js'
import {
  BIN,
  type Command,
  helpText,
  type OptionsConfig,
  parseOptions,
  type Values,
  type ValuesOf,
} from './framework/command.js'
import { EXIT, type Io, MissingPackageError, parseNumber, UsageError } from './framework/io.js'
import { VERSION } from './version.js'

export const HELP = `Usage: ${BIN} <command> [options]

Test a Publisher Affiliate API webhook endpoint before the service does, and
manage the endpoints the service delivers to.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(14)}${c.summary}`).join('\n')}

Run "${BIN} <command> --help" for a command's options.

Common options:
  --secret SECRET   the endpoint secret (whsec_...); default $AFFILIATE_WEBHOOK_SECRET,
                    which keeps it out of your shell history
  --url URL         the receiver's webhook URL
  --body FILE       a body file; "-" or no flag reads stdin (sign, verify)
  --json            machine-readable output
  --api-url URL     the service's address (management commands); default $AFFILIATE_API_URL,
                    with the API key from $AFFILIATE_API_KEY or --api-key-file
  --help, -h        help
  --version         the version

Exit codes: 0 success, 1 the answer is no (does not verify, not acknowledged,
a delivery failed), 2 wrong usage, 130 interrupted.`

function parseError(error: unknown): UsageError {
  if (error instanceof UsageError) return error
  const { code, message } = error as { code?: string; message: string }
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1]
    return new UsageError(`unknown option ${option ?? ''}`.trim())
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const argument = /'([^']+)'/.exec(message)?.[1]
    return new UsageError(`unexpected argument ${argument ?? ''}`.trim())
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new UsageError(message.replace(/^Option '([^']+)'/, '$1').replace(/\.$/, ''))
  }
  return new UsageError(message)
}

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h') {
    io.stdout.write(`${HELP}\n`)
    return first === undefined ? EXIT.usage : EXIT.ok
  }
  if (first === '--version' || first === '-v') {
    io.stdout.write(`${VERSION}\n`)
    return EXIT.ok
  }
  if (first === 'help') {
    const command = COMMANDS.find((c) => c.name === rest[0])
    io.stdout.write(`${command ? helpText(command.name, await command.spec()) : HELP}\n`)
    return rest[0] === undefined || command ? EXIT.ok : EXIT.usage
  }
  const found = COMMANDS.find((c) => c.name === first)
  if (!found) {
    io.stderr.write(
      `${BIN}: unknown command "${first}"; commands: ${COMMANDS.map((c) => c.name).join(', ')}\nRun "${BIN} --help" for usage.\n`,
    )
    return EXIT.usage
  }
  // A sub-command (`emulator clock +1h`) is a command of its own, declared like the others.
  let command: Command = found
  let spec = await found.spec()
  const sub = spec.subcommands?.find((c) => c.name === rest[0])
  if (sub) {
    rest.shift()
    command = sub
    spec = await sub.spec()
  }
  const label = sub ? `${first} ${sub.name}` : found.name
  try {
    let values: Values
    let positionals: string[]
    try {
      const parsed = parseArgs({
        args: [...rest],
        options: { ...parseOptions(spec.options), help: { type: 'boolean', short: 'h' } },
        strict: true,
        allowPositionals: spec.positionals ?? false,
      })
      values = parsed.values as Values
      positionals = parsed.positionals
      for (const [name, option] of Object.entries(spec.options)) {
        const given = values[name]
        if (option.number && typeof given === 'string') {
          values[name] = parseNumber(name, given, option.number)
        }
      }
    } catch (error) {
      throw parseError(error)
    }
    if (values.help) {
      io.stdout.write(`${helpText(label, spec)}\n`)
      return EXIT.ok
    }
    const { run } = await command.load()
    // The one place parsed flags meet the typed handler: the parser read the same declaration.
    return await run(values as ValuesOf<OptionsConfig>, io, positionals)
  } catch (error) {
    if (error instanceof MissingPackageError) {
      io.stderr.write(`${BIN} ${label}: ${error.message}\n`)
      return EXIT.usage
    }
    if (error instanceof UsageError) {
      io.stderr.write(
        `${BIN} ${label}: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ''}Run "${BIN} ${label} --help" for usage.\n`,
      )
      return EXIT.usage
    }
    throw error
  }
}
