import { configDefaults, defineConfig } from 'vitest/config'
import base, { CHAOS_TESTS, chaosProject, STARTER_TESTS } from './vitest.config.js'

/**
 * The libraries' tests: core, the adapters, the stores, the client and the queue, beside
 * their sources and across packages. CI runs them on every Node the published packages
 * claim (`npm run test:node22`, `npm run test:node-floor`); `npm test` runs everything,
 * these included, on the project's own Node. The CLI, the emulator's own tests, the
 * framework builds and the other runtimes are tools and platforms, not the libraries.
 */
export const LIBRARY_TESTS = [
  'packages/!(cli|emulator)/src/**/*.test.ts',
  'test/adapters/*.test.ts',
  'test/stores/*.test.ts',
  'test/sql/*.test.ts',
  'test/client/*.test.ts',
  'test/queue/*.test.ts',
]

/**
 * Run once, on the project's Node (`npm test`), not per Node: private replicated
 * servers taken through a failover or a standby that never answers, minutes of
 * servers' timers whose subject is the replication, and the same store code the
 * other SQL tests run on every Node.
 */
export const ONCE_TESTS = [
  'test/sql/mysql-failover.test.ts',
  'test/sql/prisma-postgres-sync.test.ts',
]

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    projects: [
      {
        extends: true,
        test: {
          name: 'libs',
          include: LIBRARY_TESTS,
          // `next build` and the starters' builds are framework builds, proven on the
          // project's Node with the stacks.
          exclude: [
            ...configDefaults.exclude,
            'test/adapters/next-*.test.ts',
            ...STARTER_TESTS,
            ...CHAOS_TESTS,
            ...ONCE_TESTS,
          ],
        },
      },
      // Both chaos tests, the SQL one on every driver: on Node 22 it once waited for
      // ever on a victim that ran no handler again before the deliveries ran out; the
      // test now aims every attempt at the victim until its effect lands.
      {
        ...chaosProject,
        test: { ...chaosProject.test, exclude: [...configDefaults.exclude, ...ONCE_TESTS] },
      },
    ],
  },
})
