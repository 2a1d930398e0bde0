/**
 * Compiled by `npm run typecheck`, never run: the CLI's handlers get their flags
 * typed from the command's declaration. Each `@ts-expect-error` below marks a
 * mistake the type check must refuse; if the typing were loosened (values as a
 * string-keyed record), those lines would compile, the directives would be
 * unused, and `npm run typecheck` would fail.
 */
import type { sign } from '../../packages/cli/src/commands/local/sign.js'
import type { verify } from '../../packages/cli/src/commands/local/verify.js'
import { command, type Handler } from '../../packages/cli/src/framework/command.js'

/** A misspelt flag. */
export const misspelt: Handler<typeof sign.options> = async (values) => {
  // @ts-expect-error sign declares --secret, not --secrte
  return values.secrte === undefined ? 0 : 1
}

/** A number flag is a number, a switch a boolean, text a string. */
export const kinds: Handler<typeof sign.options> = async (values) => {
  const timestamp: number | undefined = values.timestamp
  const json: boolean | undefined = values.json
  // @ts-expect-error --body is text, not a number
  const body: number | undefined = values.body
  return timestamp === undefined && json === undefined && body === undefined ? 0 : 1
}

/** A handler typed for another command's declaration does not fit the row. */
export const wrongRow = command(
  'sign',
  'print the Service-Signature for a body and secret',
  // @ts-expect-error the row's handler is verify's (it reads --header): sign's declaration does not fit
  async () => (await import('../../packages/cli/src/commands/local/sign.js')).sign,
  async () => (async (values) => (values.header ? 0 : 1)) as Handler<typeof verify.options>,
)
