/**
 * What a user installs: every package as the release path publishes it, installed
 * by name from the run's local registry (no workspace links; every other package
 * from the npm registry) into fresh projects, and used
 * the way users write code: ESM, CommonJS, TypeScript under node16 and bundler
 * resolution, and the core's Web Crypto build bundled for an Edge runtime.
 * `npm test` builds first, and the registry publishes that build.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { runInNewContext } from 'node:vm'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readPackages } from '../../scripts/release-plan.mjs'
import { pointScopeAt, sharedRegistry } from '../support/shared-registry.js'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
/**
 * The compilers the published types are checked under, installed into the consumer
 * project from the registry: the oldest TypeScript the packages support, 6.0, and 7.0
 * (the native compiler; its `bin/tsc` starts the platform binary).
 */
const TYPESCRIPTS = {
  '5.4 (oldest supported)': 'ts-oldest@npm:typescript@~5.4.0',
  '6.0': 'ts6@npm:typescript@~6.0.0',
  '7.0': 'ts7@npm:typescript@~7.0.0',
} as const
const tscOf = (label: keyof typeof TYPESCRIPTS) =>
  join(esm, 'node_modules', TYPESCRIPTS[label].split('@npm:')[0] as string, 'bin', 'tsc')
const SECRET = 'whsec_consumer_test'

let work: string
let registry: string
let esm: string
let cjs: string
let runtimeApp: string

async function project(name: string, type: 'module' | 'commonjs', packages: string[]) {
  const dir = join(work, name)
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type }, null, 2))
  pointScopeAt(dir, registry)
  // From the registry: nothing here may lean on what an earlier install cached.
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      ...packages,
      'express@^5',
      '@types/express@^5',
      '@types/node@^22',
      ...(type === 'module' ? Object.values(TYPESCRIPTS) : []),
    ],
    { cwd: dir },
  )
  return dir
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'aw-consumer-'))
  registry = await sharedRegistry()
  const names = readPackages(root).map((pkg) => pkg.name)
  esm = await project('esm-app', 'module', names)
  cjs = await project('cjs-app', 'commonjs', names)
  // A Bun or Deno project with only the fetch handler and what it depends on.
  runtimeApp = join(work, 'runtime-app')
  mkdirSync(runtimeApp)
  writeFileSync(
    join(runtimeApp, 'package.json'),
    JSON.stringify({ name: 'runtime-app', private: true, type: 'module' }, null, 2),
  )
  pointScopeAt(runtimeApp, registry)
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '@affiliate-webhooks/web'],
    { cwd: runtimeApp },
  )
}, 240_000)

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

/** An app that mounts the Express adapter, sends itself one signed delivery, and prints the answer. */
const app = (load: string, mode: 'esm' | 'cjs') => `
${load}
const { buildConversionEvent, signedDelivery } = testing
const seen = []
const server = express()
  .post('/hooks', affiliateWebhook({ secret: '${SECRET}', onConversion: (c) => seen.push(c.status) }))
  .listen(0, '127.0.0.1', async () => {
    const { headers, body } = await signedDelivery({ secret: '${SECRET}', event: buildConversionEvent({ conversion: { status: 'approved' } }) })
    const response = await fetch('http://127.0.0.1:' + server.address().port + '/hooks', { method: 'POST', headers, body })
    console.log(JSON.stringify({ mode: '${mode}', status: response.status, answer: await response.json(), seen }))
    server.close()
  })
`

describe('installed by name from the registry', () => {
  it('an ESM app receives a signed delivery over HTTP', async () => {
    const source = `import express from 'express'
import { affiliateWebhook } from '@affiliate-webhooks/express'
import * as testing from '@affiliate-webhooks/core/testing'`
    writeFileSync(join(esm, 'app.js'), app(source, 'esm'))
    const { stdout } = await run('node', ['app.js'], { cwd: esm })
    expect(JSON.parse(stdout)).toEqual({
      mode: 'esm',
      status: 200,
      answer: { received: true, outcome: 'processed' },
      seen: ['approved'],
    })
  })

  it('a CommonJS app receives a signed delivery over HTTP', async () => {
    const source = `const express = require('express')
const { affiliateWebhook } = require('@affiliate-webhooks/express')
const testing = require('@affiliate-webhooks/core/testing')`
    writeFileSync(join(cjs, 'app.js'), app(source, 'cjs'))
    const { stdout } = await run('node', ['app.js'], { cwd: cjs })
    expect(JSON.parse(stdout)).toMatchObject({ mode: 'cjs', status: 200, seen: ['approved'] })
  })

  // A TypeScript app serving the fetch handler with the runtime's own server,
  // sending itself one signed delivery and a duplicate of it.
  const runtimeSource = `import { affiliateWebhook } from '@affiliate-webhooks/web'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
import type { Conversion } from '@affiliate-webhooks/core'

const seen: string[] = []
const handler = affiliateWebhook({ secret: '${SECRET}', onConversion: (c: Conversion) => { seen.push(c.status) } })
const g = globalThis as any
const serve = (fetch: (request: Request) => Promise<Response>, onPort: (port: number) => void) =>
  g.Bun
    ? onPort(g.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch }).port)
    : g.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }: { port: number }) => onPort(port) }, fetch)
serve(handler, async (port) => {
  const event = buildConversionEvent({ conversion: { status: 'approved' } })
  const outcomes: unknown[] = []
  for (let attempt = 1; attempt <= 2; attempt++) {
    const { headers, body } = await signedDelivery({ secret: '${SECRET}', event, attempt })
    const response = await fetch('http://127.0.0.1:' + port + '/hooks', { method: 'POST', headers, body })
    outcomes.push([response.status, (await response.json()).outcome])
  }
  console.log(JSON.stringify({ runtime: g.Bun ? 'bun' : 'deno', outcomes, seen }))
  g.Bun ? process.exit(0) : g.Deno.exit(0)
})
`

  it.each([
    ['bun', ['run', 'app.ts']],
    [
      'deno',
      [
        'run',
        '--quiet',
        '--no-lock',
        '--node-modules-dir=manual',
        '--allow-net',
        '--allow-env',
        '--allow-read',
        'app.ts',
      ],
    ],
  ] as const)('a %s project serves the installed web handler', async (runtime, args) => {
    writeFileSync(join(runtimeApp, 'app.ts'), runtimeSource)
    const { stdout } = await run(join(root, 'node_modules/.bin', runtime), args, {
      cwd: runtimeApp,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' },
    })
    expect(JSON.parse(stdout)).toEqual({
      runtime,
      outcomes: [
        [200, 'processed'],
        [200, 'duplicate'],
      ],
      seen: ['approved'],
    })
  })

  const matrix = Object.keys(TYPESCRIPTS).flatMap((version) =>
    (['node16', 'nodenext', 'bundler'] as const).map(
      (resolution) => [version as keyof typeof TYPESCRIPTS, resolution] as const,
    ),
  )
  describe.each(matrix)('TypeScript %s, moduleResolution %s', (version, resolution) => {
    const tsc = () => tscOf(version)
    const name = `${version.split(' ')[0]}.${resolution}`
    const config = (files: string[]) =>
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          target: 'ES2022',
          module: resolution === 'bundler' ? 'esnext' : resolution,
          moduleResolution: resolution,
          types: ['node'],
        },
        files,
      })

    it('type-checks a typed onConversion handler and narrows the event union', async () => {
      writeFileSync(
        join(esm, 'handler.ts'),
        `import express from 'express'
import { affiliateWebhook } from '@affiliate-webhooks/express'
import { isKnownEvent, verifyEvent, type Conversion, type HandlerContext } from '@affiliate-webhooks/core'
import { createClient, type ServiceError } from '@affiliate-webhooks/client'
import { createEmulator } from '@affiliate-webhooks/emulator'
import { affiliateWebhook as fetchHandler } from '@affiliate-webhooks/web'

export const onFetch: (request: Request) => Promise<Response> = fetchHandler({ secret: 'whsec_x' })
export const api = createClient({ apiKey: 'la_x', baseUrl: 'http://127.0.0.1:1' })
export const emulator = createEmulator
export type Refusal = ServiceError

const table = new Map<number, { status: string; commission: string | null }>()
const app = express()
app.post('/hooks', affiliateWebhook({
  secret: 'whsec_x',
  onConversion(conversion: Conversion, event, ctx: HandlerContext) {
    const attempt: number | null = ctx.attempt
    const type: 'conversion.created' | 'conversion.updated' = event.type
    table.set(conversion.id, { status: conversion.status, commission: conversion.commission })
    return [attempt, type]
  },
  on: { 'webhook.test': (event) => event.data },
}))

export async function check(rawBody: Uint8Array, headers: Record<string, string>) {
  const event = await verifyEvent({ rawBody, headers, secret: 'whsec_x' })
  if (!isKnownEvent(event)) return event.type
  switch (event.type) {
    case 'conversion.created':
    case 'conversion.updated':
      return event.data.conversion.saleAmount
    case 'webhook.test':
      return event.data
  }
}
`,
      )
      writeFileSync(join(esm, `tsconfig.${name}.json`), config(['handler.ts']))
      await run('node', [tsc(), '-p', `tsconfig.${name}.json`], { cwd: esm })
    })

    it('refuses a handler that reads fields the conversion does not have', async () => {
      writeFileSync(
        join(esm, 'wrong.ts'),
        `import { affiliateWebhook } from '@affiliate-webhooks/express'
affiliateWebhook({
  secret: 'whsec_x',
  onConversion(conversion) {
    return conversion.amount + conversion.conversionId
  },
})
`,
      )
      writeFileSync(join(esm, `tsconfig.wrong.${name}.json`), config(['wrong.ts']))
      const failure = await run('node', [tsc(), '-p', `tsconfig.wrong.${name}.json`], {
        cwd: esm,
      }).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      )
      expect(failure).toMatch(/Property 'amount' does not exist on type 'Conversion'/)
      expect(failure).toMatch(/Property 'conversionId' does not exist on type 'Conversion'/)
    })
  })

  it('the core bundled for edge-light/worker uses Web Crypto only and verifies the same fixture', async () => {
    const entry = join(esm, 'edge-entry.js')
    writeFileSync(
      entry,
      `import { createReceiver } from '@affiliate-webhooks/core'
import { signedDelivery, buildConversionEvent } from '@affiliate-webhooks/core/testing'
export async function main() {
  const receiver = createReceiver({ secret: '${SECRET}', onConversion: () => {} })
  const { headers, body } = await signedDelivery({ secret: '${SECRET}', event: buildConversionEvent() })
  const good = await receiver.receive({ headers: new Headers(headers), rawBody: new TextEncoder().encode(body) })
  const bad = await receiver.receive({ headers: new Headers(headers), rawBody: new TextEncoder().encode(body + ' ') })
  return [good.status, good.outcome, bad.status, bad.error && bad.error.code]
}
`,
    )
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: 'edge',
      platform: 'neutral',
      conditions: ['edge-light', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      absWorkingDir: esm,
      logLevel: 'silent',
    })
    const code = result.outputFiles[0]?.text ?? ''
    expect(code).not.toMatch(/node:|require\(/)
    expect(code).toContain('crypto.subtle')
    // A context with the Web platform's globals and nothing of Node's.
    const context = {
      crypto: globalThis.crypto,
      TextEncoder,
      TextDecoder,
      Headers,
      URL,
      performance,
      setTimeout,
      clearTimeout,
      console,
    } as Record<string, unknown>
    runInNewContext(code, context)
    const edge = context.edge as { main: () => Promise<unknown[]> }
    expect(await edge.main()).toEqual([200, 'processed', 401, 'signature_mismatch'])
  })
})
