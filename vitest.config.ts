import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'
import { browserScriptVite } from './scripts/browser-script.mjs'

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * The chaos tests: two receiver processes, thousands of deliveries and SIGKILLs each;
 * and the failover tests, whose Sentinels and standbys judge a server down by timers.
 * Beside other files they starved (a run past 180 s on a loaded machine): they run in a
 * group of their own, one file at a time, with nothing else beside them.
 */
export const CHAOS_TESTS = [
  'test/sql/sql-chaos.test.ts',
  'test/stores/chaos.test.ts',
  'test/stores/redis-failover.test.ts',
  'test/sql/postgres-failover.test.ts',
  'test/sql/mysql-failover.test.ts',
]

/**
 * `init` on starter apps made by each stack's own creator (and an Express app on
 * PostgreSQL, copied from test/cli/init-apps): each creates, installs, builds and
 * serves an app, so they run with the stack builds, one at a time, once per run
 * (vitest.libs.config.ts, run on every Node, leaves them out).
 */
export const STARTER_TESTS = [
  'test/adapters/{astro,sveltekit,react-router,nuxt,nest,fastify-cli,express-pg}-init.test.ts',
]

export const chaosProject = {
  extends: true,
  test: {
    name: 'chaos',
    include: CHAOS_TESTS,
    sequence: { groupOrder: 3 },
    fileParallelism: false,
  },
} as const

const cliManifest = JSON.parse(readFileSync(src('./packages/cli/package.json'), 'utf8'))

export default defineConfig({
  // What packages/cli/tsup.config.ts writes into the build: the CLI's own version.
  define: { __AW_CLI_VERSION__: JSON.stringify(cliManifest.version) },
  // `<file>.ts?script`: browser code bundled as text, as the package's build does it.
  plugins: [browserScriptVite()],
  resolve: {
    // Tests run against the sources; test/packaging/builds.test.ts checks the built files.
    alias: [
      {
        find: /^@affiliate-webhooks\/client\/internal$/,
        replacement: src('./packages/client/src/internal.ts'),
      },
      {
        find: /^@affiliate-webhooks\/bullmq\/internal$/,
        replacement: src('./packages/bullmq/src/internal.ts'),
      },
      {
        find: /^@affiliate-webhooks\/redis\/internal$/,
        replacement: src('./packages/redis/src/internal.ts'),
      },
      { find: /^@affiliate-webhooks\/core$/, replacement: src('./packages/core/src/index.ts') },
      {
        find: /^@affiliate-webhooks\/core\/testing$/,
        replacement: src('./packages/core/src/testing/index.ts'),
      },
      {
        find: /^@affiliate-webhooks\/core\/internal$/,
        replacement: src('./packages/core/src/internal.ts'),
      },
      { find: /^@affiliate-webhooks\/node$/, replacement: src('./packages/node/src/index.ts') },
      {
        find: /^@affiliate-webhooks\/express$/,
        replacement: src('./packages/express/src/index.ts'),
      },
      {
        find: /^@affiliate-webhooks\/fastify$/,
        replacement: src('./packages/fastify/src/index.ts'),
      },
      { find: /^@affiliate-webhooks\/next$/, replacement: src('./packages/next/src/index.ts') },
      { find: /^@affiliate-webhooks\/web$/, replacement: src('./packages/web/src/index.ts') },
      {
        find: /^@affiliate-webhooks\/lambda$/,
        replacement: src('./packages/lambda/src/index.ts'),
      },
      { find: /^@affiliate-webhooks\/koa$/, replacement: src('./packages/koa/src/index.ts') },
      { find: /^@affiliate-webhooks\/h3$/, replacement: src('./packages/h3/src/index.ts') },
      { find: /^@affiliate-webhooks\/redis$/, replacement: src('./packages/redis/src/index.ts') },
      { find: /^@affiliate-webhooks\/mysql$/, replacement: src('./packages/mysql/src/index.ts') },
      {
        find: /^@affiliate-webhooks\/mysql\/internal$/,
        replacement: src('./packages/mysql/src/internal.ts'),
      },
      { find: /^@affiliate-webhooks\/sqlite$/, replacement: src('./packages/sqlite/src/index.ts') },
      {
        find: /^@affiliate-webhooks\/postgres\/internal$/,
        replacement: src('./packages/postgres/src/internal.ts'),
      },
      { find: /^@affiliate-webhooks\/prisma$/, replacement: src('./packages/prisma/src/index.ts') },
      {
        find: /^@affiliate-webhooks\/postgres$/,
        replacement: src('./packages/postgres/src/index.ts'),
      },
      {
        find: /^@affiliate-webhooks\/client$/,
        replacement: src('./packages/client/src/index.ts'),
      },
      {
        find: /^@affiliate-webhooks\/emulator$/,
        replacement: src('./packages/emulator/src/index.ts'),
      },
      {
        find: /^@affiliate-webhooks\/emulator\/internal$/,
        replacement: src('./packages/emulator/src/internal.ts'),
      },
      { find: /^@affiliate-webhooks\/bullmq$/, replacement: src('./packages/bullmq/src/index.ts') },
      { find: /^@affiliate-webhooks\/cli$/, replacement: src('./packages/cli/src/index.ts') },
    ],
  },
  test: {
    // Most files wait on servers, child processes and clocks, not on the CPU. vitest's
    // default (one worker fewer than the cores) runs them one at a time on a 2-core
    // machine; three at once keep both cores busy.
    maxWorkers: 3,
    // The run's shared local registry (started by the first test that needs it).
    globalSetup: ['test/support/registry-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        // The tests beside the sources: Node alone, no database, browser or other runtime
        // (`npm run test:unit`, the maintainer's loop).
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [
            ...configDefaults.exclude,
            'test/adapters/next-*.test.ts',
            'test/stacks/*-build.test.ts',
            ...STARTER_TESTS,
            ...CHAOS_TESTS,
          ],
        },
      },
      chaosProject,
      {
        // `next build` takes every core it gets: it runs alone, after the rest.
        extends: true,
        test: {
          name: 'next',
          include: ['test/adapters/next-*.test.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Astro, Nuxt, SvelteKit, React Router (their examples and `init` on their starters):
        // each build takes the CPU too; one at a time, after Next.
        extends: true,
        test: {
          name: 'stacks',
          include: ['test/stacks/*-build.test.ts', ...STARTER_TESTS],
          sequence: { groupOrder: 2 },
          fileParallelism: false,
        },
      },
    ],
  },
})
