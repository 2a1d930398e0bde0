/**
 * vitest's globalSetup: a folder for the run's shared local registry, which the
 * first test that needs it starts (see shared-registry.ts), and which ends with
 * the run. A run whose tests never ask for it starts nothing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    awRegistryDir: string
  }
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'aw-shared-registry-'))
  project.provide('awRegistryDir', dir)
  return async () => {
    const pidFile = join(dir, 'pid')
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'))
      try {
        // registry.mjs stops Verdaccio and removes its storage on SIGTERM.
        process.kill(pid, 'SIGTERM')
        for (let i = 0; i < 100; i++) {
          process.kill(pid, 0)
          await new Promise((done) => setTimeout(done, 100))
        }
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true })
  }
}
