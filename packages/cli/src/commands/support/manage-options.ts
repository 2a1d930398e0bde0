// What the declarations of the management commands share. Light on purpose: the
// command table (and so --help) loads it; the client is imported by the handlers.
import { API_KEY_ENV, API_URL_ENV } from '@affiliate-webhooks/client/internal'
import { type CommandSpec, flag, type OptionsConfig } from '../../framework/command.js'

/** Flags every management command takes. */
export const MANAGE_OPTIONS = {
  'api-url': flag.text('URL', `the service's address; default $${API_URL_ENV}`),
  'api-key-file': flag.text('FILE', `read the API key from FILE; default $${API_KEY_ENV}`),
  // Accepted only to refuse it with a reason: a key on the command line lands in shell history.
  'api-key': { type: 'string' },
  json: flag.bool('machine-readable output'),
  debug: flag.bool('print the stack of an unexpected error'),
} as const satisfies OptionsConfig

/** What every management command's help ends with. */
export const MANAGE_FOOTER = `Exit codes: 0 success, 1 the endpoint or delivery is not healthy, 2 wrong usage,
3 the service refused the call (4xx: key, scope, not found, validation),
4 the service failed or could not be reached (5xx, network, not the API), 130 interrupted.`

/**
 * A management command: it takes arguments, the {@link MANAGE_OPTIONS} after
 * its own, and its help ends with {@link MANAGE_FOOTER} unless it has a footer.
 */
export const manageCommand = <const O extends OptionsConfig>(
  spec: CommandSpec<O>,
): CommandSpec<O & typeof MANAGE_OPTIONS> => ({
  positionals: true,
  footer: MANAGE_FOOTER,
  ...spec,
  options: { ...spec.options, ...MANAGE_OPTIONS },
})

/** `--since TIME`, declared once: what it narrows is the command's. */
export const sinceOption = (what: string) =>
  ({
    type: 'string',
    value: 'TIME',
    help: `${what} created since TIME: ISO (2026-11-20T08:00:00Z)\nor a duration back from now (2h, 3d)`,
  }) as const
