/**
 * What the starter-app tests (test/adapters/*-init.test.ts) found wrong in
 * `init`, held on the small committed apps (test/cli/init-apps/): the
 * `endpoints create` line it ends with names the port the stack's own dev
 * server (`npm run dev`) listens on, which is not 3000 on Vite (SvelteKit,
 * React Router) or Astro.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI } from '../support/cli-live.js'
import { run } from '../support/run-process.js'

const apps = new URL('./init-apps/', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'aw-init-starters-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const CASES = [
  { app: 'astro', url: 'http://localhost:4321/hooks' },
  { app: 'sveltekit-postgresjs', url: 'http://localhost:5173/hooks' },
  { app: 'react-router', url: 'http://localhost:5173/hooks' },
  { app: 'nuxt', url: 'http://localhost:3000/hooks' },
  { app: 'next-prisma', url: 'http://localhost:3000/api/hooks' },
]

describe("init's next commands name the stack's dev server", () => {
  for (const { app, url } of CASES) {
    it(`${app}: endpoints create --url ${url}`, async () => {
      const dir = join(work, app)
      cpSync(join(apps, app), dir, { recursive: true })
      const result = await run(process.execPath, [CLI, 'init', '--dir', dir, '--dry-run', '--json'])
      expect(result.code, result.stderr).toBe(0)
      const { next } = JSON.parse(result.stdout).plan as { next: string[] }
      const create = next.find((line) => line.includes(' endpoints create '))
      expect(create).toContain(` --url ${url} `)
    })
  }
})
