/**
 * Import rules `npm run lint` keeps (dependency-cruiser reads this file).
 * Paths are resolved through the root tsconfig, so `@affiliate-webhooks/<pkg>`
 * resolves to `packages/<pkg>/src/index.ts` and an internal entry to
 * `packages/<pkg>/src/internal.ts`: the rules below speak of source files.
 */
const PACKAGES = '^packages/([^/]+)/src/'
/** What one package may import of another: its entries, never a file behind them. */
const ENTRY = '^packages/[^/]+/src/(index|internal)\\.ts$|^packages/core/src/testing/index\\.ts$'
/** Libraries that exist to style or lay out terminal text. */
const TERMINAL_FORMATTING =
  '^node_modules/(chalk|picocolors|kleur|colorette|ansi-colors|ansi-styles|cli-table3|boxen|ora|wrap-ansi|string-width|strip-ansi|log-symbols)/'
const ADAPTERS = '^packages/(node|web|express|fastify|koa|h3|next|lambda)/src/'

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'An import cycle, static or dynamic, anywhere in the sources, tests, examples or scripts.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-stands-alone',
      comment:
        'core imports no framework, no store client and no other package of this repository: everything else builds on it.',
      severity: 'error',
      from: { path: '^packages/core/src/', pathNot: '\\.test\\.ts$' },
      to: {
        dependencyTypesNot: ['core', 'type-only'],
        pathNot: ['^packages/core/src/', '^node_modules/@opentelemetry/api/'],
      },
    },
    {
      name: 'adapters-import-core',
      comment:
        'An adapter builds on core, and a framework adapter may build on the node or web adapter (express, koa, h3 and next hand over to them); nothing else of this repository.',
      severity: 'error',
      from: { path: ADAPTERS },
      to: {
        path: '^packages/',
        pathNot: ['^packages/(core|node|web)/src/', '^packages/$1/src/'],
      },
    },
    {
      name: 'base-adapters-import-only-core',
      comment: 'The node and web adapters build on core alone.',
      severity: 'error',
      from: { path: '^packages/(node|web)/src/' },
      to: { path: '^packages/', pathNot: ['^packages/core/src/', '^packages/$1/src/'] },
    },
    {
      name: 'terminal-text-only-in-the-cli',
      comment:
        'Libraries return data and typed errors; only the CLI turns them into lines for a terminal.',
      severity: 'error',
      from: { path: '^packages/', pathNot: '^packages/cli/' },
      to: { path: [TERMINAL_FORMATTING, '^packages/cli/'] },
    },
    {
      name: 'entries-only',
      comment:
        'A package imports another package through its main, testing or internal entry, never a file behind them.',
      severity: 'error',
      from: { path: PACKAGES },
      to: { path: '^packages/[^/]+/src/', pathNot: [ENTRY, '^packages/$1/src/'] },
    },
    {
      name: 'emulator-floors',
      comment:
        "The emulator's domain (account/, delivery/, simulate/, relay/) and its shared/ floor import nothing of the layers above them (api/, server/, console/).",
      severity: 'error',
      from: { path: '^packages/emulator/src/(shared|account|delivery|simulate|relay)/' },
      to: { path: '^packages/emulator/src/(api|server|console)/' },
    },
    {
      name: 'emulator-shared-at-the-bottom',
      comment:
        "The emulator's shared/ floor (errors, clock, ids, counting, records) imports nothing of the emulator above it.",
      severity: 'error',
      from: { path: '^packages/emulator/src/shared/' },
      to: { path: '^packages/emulator/src/', pathNot: '^packages/emulator/src/shared/' },
    },
    {
      name: 'cli-framework-stands-alone',
      comment:
        "The CLI's framework (command declarations, parsing, help, completion, io) imports no package of this repository and nothing of the CLI outside it.",
      severity: 'error',
      from: { path: '^packages/cli/src/framework/' },
      to: { path: '^packages/', pathNot: '^packages/cli/src/framework/' },
    },
    {
      name: 'examples-use-entries',
      comment: 'An example imports packages the way a user does: through their entries.',
      severity: 'error',
      from: { path: '^examples/' },
      to: { path: '^packages/[^/]+/src/', pathNot: ENTRY },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: {
      path: [
        '(^|/)dist/',
        '(^|/)\\.next/',
        '(^|/)\\.astro/',
        '(^|/)\\.svelte-kit/',
        '(^|/)\\.nuxt/',
        // The Prisma clients the tests generate (git-ignored): Prisma's code, not ours.
        '^test/sql/prisma/generated/',
        '(^|/)\\.output/',
        '(^|/)build/',
        '(^|/)\\.react-router/',
      ],
    },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
    moduleSystems: ['es6', 'cjs'],
    detectJSDocImports: false,
  },
}
