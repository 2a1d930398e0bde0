import { defineCommand, flag } from '../../framework/command.js'

export const init = defineCommand({
  usage: [
    'init [--dir DIR] [--framework ID] [--store ID] [--path PATH] [--secret-env NAME]',
    '     [--yes] [--dry-run] [--force] [--skip-install] [--json]',
  ],
  about: `Sets the receiver up in the app in the current folder (or --dir): finds its
framework, database client, package manager and language; shows the plan (the
files it creates, the lines it adds to .env, .gitignore or a Prisma schema, the
scripts of package.json it adds (the table's setup) or changes (so the start
scripts load .env where the stack does not), the packages it installs, the
edit of your app's own file as a diff (Express, Fastify, Koa, Hono, NestJS), or
the lines to add there when it cannot be sure), asks, then writes, installs
with the app's package manager and prints the next commands. It never overwrites a file without --force, never
changes a variable already in .env, and says so when the app is set up already.`,
  options: {
    dir: flag.text('DIR', "the app's folder (default: the current one)"),
    framework: flag.text(
      'ID',
      'the stack, instead of the one found: next-app, next-pages, astro, sveltekit,\nreact-router, nuxt, nitro, nest, express, fastify-autoload, fastify, koa, hono,\nelysia, node',
    ),
    store: flag.text(
      'ID',
      'the store, instead of the one found: prisma, postgres, postgres-js, mysql,\nsqlite, redis, memory',
    ),
    path: flag.text('PATH', 'the route (default /hooks, /api/hooks on Next.js)'),
    'secret-env': flag.text(
      'NAME',
      'the variable holding the secret (default AFFILIATE_WEBHOOK_SECRET)',
    ),
    yes: flag.bool('write and install without asking'),
    'dry-run': flag.bool('show the plan with every file in full; write and install nothing'),
    force: flag.bool('overwrite a file init writes when it is there with other text'),
    'skip-install': flag.bool('print the install command instead of running it'),
    json: flag.bool('print the plan (and what was done) as JSON'),
  },
  footer: `Examples:
  npx @affiliate-webhooks/cli init --dry-run
  npx @affiliate-webhooks/cli init --yes --path /webhooks/affiliate

Exit codes: 0 set up (or already set up), 1 not written (answered no, a file
differs without --force, the install failed), 2 wrong usage or no app there.`,
})
