// What the runtime matrix (conformance-runtimes.test.ts) cannot show by answers
// alone: the Worker bundle carries nothing of Node's, and a memory store on
// Workers says once, at start-up, that it cannot de-duplicate across isolates.
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { Running } from '../support/conformance-adapters.js'
import { SECRET, send } from '../support/conformance-cases.js'
import { bundleWorker, processRuntime, startupWarnings, workerdRuntime } from './runtime-bridge.js'

const running: Running[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()))
  startupWarnings.splice(0)
})

async function start(adapter: ReturnType<typeof workerdRuntime>, lines: string[]) {
  const app = await adapter.start({
    secret: SECRET,
    logger: { warn: (line) => lines.push(line), error: (line) => lines.push(line) },
    onConversion: () => {},
  })
  running.push(app)
  return app
}

describe('on Cloudflare Workers (workerd through Miniflare)', () => {
  it('the Worker bundle imports no Node built-in and verifies with Web Crypto', async () => {
    const script = await bundleWorker()
    expect(script).not.toMatch(/from\s*["']node:|require\(["']node:/)
    // workerd refuses a module with an import() whose name is not a literal.
    expect(script).not.toMatch(/\bimport\(/)
    expect(script).toContain('crypto.subtle')
  })

  it('the memory store warns once per isolate, naming what to use instead; deliveries still work', async () => {
    const lines: string[] = []
    const app = await start(workerdRuntime('web'), lines)
    for (let i = 0; i < 3; i++) {
      expect((await send(app.url, buildConversionEvent())).status).toBe(200)
    }
    expect(startupWarnings).toHaveLength(1)
    expect(startupWarnings[0]).toMatch(/Cloudflare Workers isolate.*Durable Object/)
    expect(lines).toEqual([])
  })
})

describe('on a long-running server (Bun)', () => {
  it('the memory store gives no start-up warning', async () => {
    const lines: string[] = []
    const app = await start(processRuntime('bun', 'web'), lines)
    expect((await send(app.url, buildConversionEvent())).status).toBe(200)
    expect(startupWarnings).toEqual([])
    expect(lines).toEqual([])
  })
})
