/**
 * The stacks `init` knows, as data: what identifies each one in an app, which
 * adapter it takes, where its webhook route goes and what that route says, and
 * the mistake that stack makes with the body. `init`'s code reads this table; it
 * has no chain of framework checks of its own.
 */

/** What a template is written from. */
export interface RouteContext {
  /** `/hooks`, or what `--path` said. */
  path: string
  /** The environment variable holding the endpoint secret. */
  secretEnv: string
  /** TypeScript (`.ts`, types) or JavaScript. */
  typescript: boolean
  /** From the route file to the module `init` writes beside it (no extension: `./affiliate-webhooks`). */
  moduleImport: string
}

/** One stack: how to find it, and what `init` writes for it. */
export interface Stack {
  id: string
  name: string
  /** Any of these in `dependencies` or `devDependencies` identifies the stack. */
  dependencies: readonly string[]
  /** And all of these files exist (relative to the app), when the dependency alone is not enough. */
  files?: readonly string[]
  /** Checked in this order: a more specific stack before one it builds on. */
  priority: number
  /** The adapter package. */
  adapter: string
  /** The route's default path, when the stack has a convention (`/api/hooks` in Next.js). */
  defaultPath?: string
  /** The port its dev server (`npm run dev`) listens on by default, when not 3000 (Vite's 5173, Astro's 4321). */
  devPort?: number
  /**
   * A stack whose routes are files: where the route file goes for `path`, and
   * what it says. A stack whose routes live in the app's own code has `mount` instead.
   */
  routeFile?: {
    /** The route file, relative to the app; `src` is `src/` when the app keeps its code there. */
    at(path: string, src: string): string
    text(context: RouteContext): string
  }
  /** A stack mounted in the app's own file: the lines to add, and where they go. */
  mount?: {
    /** Files that usually hold the app, first found wins. */
    appFiles: readonly string[]
    lines(context: RouteContext): string[]
    where: string
  }
  /** The mistake this stack makes with the body, said once in the plan. */
  bodyMistake: string
  /** What the app must still do for the route file to be served, when the stack needs more than the file. */
  routeNote?: (path: string) => string
  /** Where the shared module goes, relative to `src`. */
  moduleDir: string
  /**
   * How `.env` reaches `process.env` in the app's own start scripts: `stack`, the
   * stack reads it itself (Next.js, Vite, Astro, Nuxt, fastify-cli, Bun); `node`,
   * its scripts run Node, told to with `--env-file-if-exists=.env`; `nest`,
   * `nest start --env-file .env` (and Node's flag for `node dist/main`).
   */
  env: EnvLoader
  /** The app's scripts the next commands start it with, the first one there wins (default `dev`, then `start`). */
  startScripts?: readonly string[]
  /**
   * An expression true while the stack's build imports the module (Next.js and
   * SvelteKit load route modules to read their exports), and its import: then a
   * variable not set yet is not an error.
   */
  building?: { import?: string; expression: string }
  /** The route file runs as Node loads it, not bundled: its relative import names the file (`.js`). */
  routeImportsFile?: boolean
  /** What the shared module exports besides `store` and `onConversion`: the handler, for stacks that mount one. */
  handler: keyof typeof HANDLERS
}

/** Who loads `.env`: the stack, Node told by a flag in the app's scripts, or Nest's CLI. */
export type EnvLoader = 'stack' | 'node' | 'nest'

/** The handler the shared module makes, by the adapter's shape. */
export const HANDLERS = {
  /** The route file makes the handler from `store` and `onConversion`. */
  none: () => undefined,
  /** A Request -> Response handler, its options read on the first request (builds load routes without secrets). */
  web: (c: RouteContext) => ({
    import: "import { affiliateWebhook } from '@affiliate-webhooks/web'",
    code: `export const webhook = affiliateWebhook(() => ({ secret: ${env(c)}, store, onConversion }))`,
  }),
  express: (c: RouteContext) => ({
    import: "import { affiliateWebhook } from '@affiliate-webhooks/express'",
    code: `export const webhook = affiliateWebhook({ secret: ${env(c)}, store, onConversion })`,
  }),
  koa: (c: RouteContext) => ({
    import: "import { affiliateWebhook } from '@affiliate-webhooks/koa'",
    code: `export const webhook = affiliateWebhook({ path: '${c.path}', secret: ${env(c)}, store, onConversion })`,
  }),
  node: (c: RouteContext) => ({
    import: "import { affiliateWebhook } from '@affiliate-webhooks/node'",
    code: `export const webhook = affiliateWebhook({ path: '${c.path}', secret: ${env(c)}, store, onConversion })`,
  }),
  fastify: (c: RouteContext) => ({
    import: "import { affiliateWebhook } from '@affiliate-webhooks/fastify'",
    code: `export async function registerWebhook(app${c.typescript ? ": import('fastify').FastifyInstance" : ''}) {
  await app.register(affiliateWebhook, { path: '${c.path}', secret: ${env(c)}, store, onConversion })
}`,
  }),
} as const

const strip = (path: string) => path.replace(/^\/+|\/+$/g, '')
const env = (c: RouteContext) => `process.env.${c.secretEnv}${c.typescript ? '!' : ''}`

/** The web handler, made once in the shared module, for the stacks that hand over a Request. */
const webRoute = (exportLine: (c: RouteContext) => string) => (c: RouteContext) =>
  `import { webhook } from '${c.moduleImport}'\n\n${exportLine(c)}\n`

export const STACKS: readonly Stack[] = [
  {
    id: 'next-app',
    handler: 'none',
    name: 'Next.js (App Router)',
    dependencies: ['next'],
    files: ['{src/,}app'],
    priority: 10,
    adapter: '@affiliate-webhooks/next',
    defaultPath: '/api/hooks',
    routeFile: {
      at: (path, src) => `${src}app/${strip(path)}/route.${'ts'}`,
      text: (c) =>
        `import { affiliateWebhook } from '@affiliate-webhooks/next'\nimport { onConversion, store } from '${c.moduleImport}'\n\n// The receiver is made on the first request: next build needs no secret.\nexport const POST = affiliateWebhook({ secret: ${env(c)}, store, onConversion })\n`,
    },
    bodyMistake:
      'a route that reads request.json() or request.text() before the webhook: give the webhook the untouched request',
    moduleDir: 'lib',
    env: 'stack',
    building: { expression: "process.env.NEXT_PHASE === 'phase-production-build'" },
  },
  {
    id: 'next-pages',
    handler: 'none',
    name: 'Next.js (Pages Router)',
    dependencies: ['next'],
    files: ['{src/,}pages'],
    priority: 11,
    adapter: '@affiliate-webhooks/next',
    defaultPath: '/api/hooks',
    routeFile: {
      at: (path, src) => `${src}pages/${strip(path)}.ts`,
      text: (c) =>
        `import { affiliateWebhookPages } from '@affiliate-webhooks/next'\nimport { onConversion, store } from '${c.moduleImport}'\n\n// Next must not parse the body: the signature is over its exact bytes.\nexport const config = { api: { bodyParser: false } }\n\nexport default affiliateWebhookPages({ secret: ${env(c)}, store, onConversion })\n`,
    },
    bodyMistake:
      'Next.js parses a Pages API body unless the route exports config = { api: { bodyParser: false } }',
    moduleDir: 'lib',
    env: 'stack',
    building: { expression: "process.env.NEXT_PHASE === 'phase-production-build'" },
  },
  {
    id: 'astro',
    handler: 'web',
    name: 'Astro',
    dependencies: ['astro'],
    devPort: 4321,
    priority: 20,
    adapter: '@affiliate-webhooks/web',
    routeFile: {
      at: (path, src) => `${src || 'src/'}pages/${strip(path)}.ts`,
      text: webRoute(
        (c) =>
          `// Rendered on request, never prerendered.\nexport const prerender = false\n\nexport const POST${c.typescript ? ": import('astro').APIRoute" : ''} = ({ request }) => webhook(request)`,
      ),
    },
    bodyMistake:
      'middleware that reads context.request.json() first: read context.request.clone() there',
    moduleDir: 'lib',
    env: 'stack',
  },
  {
    id: 'sveltekit',
    handler: 'web',
    name: 'SvelteKit',
    dependencies: ['@sveltejs/kit'],
    devPort: 5173,
    priority: 20,
    adapter: '@affiliate-webhooks/web',
    routeFile: {
      at: (path, src) => `${src || 'src/'}routes/${strip(path)}/+server.ts`,
      text: webRoute(
        (c) =>
          `export const POST${c.typescript ? ": import('@sveltejs/kit').RequestHandler" : ''} = ({ request }) => webhook(request)`,
      ),
    },
    bodyMistake: 'a handle hook that reads event.request first: read event.request.clone() there',
    moduleDir: 'lib/server',
    env: 'stack',
    building: { import: "import { building } from '$app/environment'", expression: 'building' },
  },
  {
    id: 'react-router',
    handler: 'web',
    name: 'React Router (framework mode)',
    dependencies: ['@react-router/dev'],
    devPort: 5173,
    priority: 20,
    adapter: '@affiliate-webhooks/web',
    routeFile: {
      at: (path) => `app/routes/${strip(path).replaceAll('/', '.')}.ts`,
      text: webRoute(
        (c) =>
          `// A resource route: an action and no component.\nexport const action = ({ request }${c.typescript ? ': { request: Request }' : ''}) => webhook(request)`,
      ),
    },
    bodyMistake: 'an action that reads request.formData() or request.json() before the webhook',
    routeNote: (path) =>
      `the route: with routes listed in app/routes.ts, add route('${strip(path)}', 'routes/${strip(path).replaceAll('/', '.')}.ts') there, and route to its import from @react-router/dev/routes (init does not edit it); with flatRoutes() the file is found by its name`,
    moduleDir: 'lib',
    env: 'stack',
  },
  {
    id: 'nuxt',
    handler: 'none',
    name: 'Nuxt',
    dependencies: ['nuxt'],
    priority: 20,
    adapter: '@affiliate-webhooks/h3',
    routeFile: {
      at: (path) => `server/routes/${strip(path)}.post.ts`,
      text: (c) =>
        `import { affiliateWebhook } from '@affiliate-webhooks/h3'\nimport { onConversion, store } from '${c.moduleImport}'\n\nexport default affiliateWebhook({ secret: ${env(c)}, store, onConversion })\n`,
    },
    bodyMistake:
      'server middleware that reads the body first (readBody, toWebRequest(event).json())',
    moduleDir: '../server/utils',
    env: 'stack',
  },
  {
    id: 'nitro',
    handler: 'none',
    name: 'Nitro',
    dependencies: ['nitropack', 'nitro'],
    priority: 21,
    adapter: '@affiliate-webhooks/h3',
    routeFile: {
      at: (path) => `routes/${strip(path)}.post.ts`,
      text: (c) =>
        `import { affiliateWebhook } from '@affiliate-webhooks/h3'\nimport { onConversion, store } from '${c.moduleImport}'\n\nexport default affiliateWebhook({ secret: ${env(c)}, store, onConversion })\n`,
    },
    bodyMistake: 'middleware that reads the body first: read event.req.clone() there',
    moduleDir: '../utils',
    env: 'stack',
  },
  {
    id: 'nest',
    handler: 'express',
    name: 'NestJS',
    dependencies: ['@nestjs/core'],
    priority: 15,
    adapter: '@affiliate-webhooks/express',
    mount: {
      appFiles: ['src/main.ts', 'src/main.js'],
      lines: (c) => [
        `import { webhook } from '${c.moduleImport}'`,
        `app.use('${c.path}', webhook)`,
      ],
      where: 'after NestFactory.create(...), before app.listen(...)',
    },
    bodyMistake:
      "Nest's body parser: mount the webhook with app.use before listen (it reads the body itself)",
    moduleDir: '',
    env: 'nest',
    startScripts: ['start:dev', 'dev', 'start'],
  },
  {
    id: 'express',
    handler: 'express',
    name: 'Express',
    dependencies: ['express'],
    priority: 30,
    adapter: '@affiliate-webhooks/express',
    mount: {
      appFiles: [
        'src/app.ts',
        'src/app.js',
        'src/index.ts',
        'src/index.js',
        'app.js',
        'index.js',
        'server.js',
        'src/server.ts',
        'src/server.js',
      ],
      lines: (c) => [
        `import { webhook } from '${c.moduleImport}'`,
        `app.post('${c.path}', webhook)`,
      ],
      where:
        'before app.use(express.json()) (or any body parser), right after const app = express()',
    },
    bodyMistake: 'app.use(express.json()) before the webhook route: mount the webhook first',
    moduleDir: '',
    env: 'node',
  },
  {
    // fastify-cli's template (`fastify-cli generate`, `create-fastify`): app.ts is a
    // plugin that @fastify/autoload fills from routes/ and plugins/; there is no
    // Fastify() nor listen to mount next to, and no file of the app's to edit.
    id: 'fastify-autoload',
    handler: 'none',
    name: 'Fastify (@fastify/autoload routes, fastify-cli)',
    dependencies: ['@fastify/autoload'],
    files: ['{src/,}routes'],
    priority: 25,
    adapter: '@affiliate-webhooks/fastify',
    routeFile: {
      // At the top of routes/: autoload gives a file there no prefix, so the route is `path` itself.
      at: (_path, src) => `${src}routes/affiliate-webhooks.ts`,
      text: (c) =>
        `${c.typescript ? "import type { FastifyPluginAsync } from 'fastify'\n" : ''}import { affiliateWebhook } from '@affiliate-webhooks/fastify'\nimport { onConversion, store } from '${c.moduleImport}'\n\n// Loaded by @fastify/autoload with the other routes. The receiver registers in\n// a context of its own: its body parser keeps the exact bytes, the app's stays as it is.\nconst affiliateWebhooks${c.typescript ? ': FastifyPluginAsync' : ''} = async (fastify) => {\n  await fastify.register(affiliateWebhook, { path: '${c.path}', secret: ${env(c)}, store, onConversion })\n}\n\nexport default affiliateWebhooks\n`,
    },
    routeImportsFile: true,
    bodyMistake:
      "a content-type parser for application/json that replaces Fastify's: the plugin keeps its own",
    moduleDir: '',
    // fastify start reads .env (process.loadEnvFile) before it loads the app.
    env: 'stack',
  },
  {
    id: 'fastify',
    handler: 'fastify',
    name: 'Fastify',
    dependencies: ['fastify'],
    priority: 30,
    adapter: '@affiliate-webhooks/fastify',
    mount: {
      appFiles: [
        'src/app.ts',
        'src/app.js',
        'src/index.ts',
        'src/index.js',
        'app.js',
        'index.js',
        'server.js',
        'src/server.ts',
      ],
      lines: (c) => [
        `import { registerWebhook } from '${c.moduleImport}'`,
        'await registerWebhook(app)',
      ],
      where: 'after const app = Fastify(), before app.listen(...)',
    },
    bodyMistake:
      "a content-type parser for application/json that replaces Fastify's: the plugin keeps its own",
    moduleDir: '',
    env: 'node',
  },
  {
    id: 'koa',
    handler: 'koa',
    name: 'Koa',
    dependencies: ['koa'],
    priority: 30,
    adapter: '@affiliate-webhooks/koa',
    mount: {
      appFiles: [
        'src/app.ts',
        'src/app.js',
        'src/index.ts',
        'src/index.js',
        'app.js',
        'index.js',
        'server.js',
      ],
      lines: (c) => [`import { webhook } from '${c.moduleImport}'`, 'app.use(webhook)'],
      where: 'before app.use(bodyParser())',
    },
    bodyMistake: 'a body parser before the webhook middleware',
    moduleDir: '',
    env: 'node',
  },
  {
    id: 'hono',
    handler: 'web',
    name: 'Hono',
    dependencies: ['hono'],
    priority: 30,
    adapter: '@affiliate-webhooks/web',
    mount: {
      appFiles: ['src/index.ts', 'src/index.js', 'src/app.ts', 'index.ts', 'index.js'],
      lines: (c) => [
        `import { webhook } from '${c.moduleImport}'`,
        `app.post('${c.path}', (c) => webhook(c.req.raw))`,
      ],
      where: 'with your other routes, after const app = new Hono()',
    },
    bodyMistake: 'a middleware that reads c.req.json() before the webhook route',
    moduleDir: '',
    // On Node (tsx, node); Bun and Wrangler read .env (.dev.vars) themselves, and their scripts are left alone.
    env: 'node',
  },
  {
    id: 'elysia',
    handler: 'web',
    name: 'Elysia',
    dependencies: ['elysia'],
    priority: 30,
    adapter: '@affiliate-webhooks/web',
    mount: {
      appFiles: ['src/index.ts', 'src/index.js', 'index.ts'],
      lines: (c) => [
        `import { webhook } from '${c.moduleImport}'`,
        `app.post('${c.path}', ({ request }) => webhook(request), { parse: 'none' })`,
      ],
      where: 'with your other routes, on the Elysia app',
    },
    bodyMistake: "Elysia's own body parsing: the route must say parse: 'none'",
    moduleDir: '',
    // Bun reads .env itself.
    env: 'stack',
  },
  {
    id: 'node',
    handler: 'node',
    name: 'node:http',
    dependencies: [],
    priority: 100,
    adapter: '@affiliate-webhooks/node',
    mount: {
      appFiles: ['src/index.ts', 'src/index.js', 'index.js', 'server.js', 'src/server.ts'],
      lines: (c) => [
        `import { webhook } from '${c.moduleImport}'`,
        `// in your request listener, before it reads the body:\nif (req.url === '${c.path}') return webhook(req, res)`,
      ],
      where: 'at the top of your request listener',
    },
    bodyMistake: 'a listener that reads the request stream before the webhook',
    moduleDir: '',
    env: 'node',
  },
]

/** The stack with this id, or undefined. */
export const stackById = (id: string): Stack | undefined => STACKS.find((stack) => stack.id === id)
