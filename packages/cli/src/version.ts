declare const __AW_CLI_VERSION__: string | undefined

/**
 * The CLI's version, printed by --version and sent in its User-Agent: the version
 * of its own package.json, which the build writes in (tsup's `define`; vitest's
 * configs define it the same way for the tests), so it follows every release's
 * version step. Sources run by anything else say `unbuilt`.
 */
export const VERSION: string =
  typeof __AW_CLI_VERSION__ === 'string' ? __AW_CLI_VERSION__ : 'unbuilt'
