import { describe, expect, it } from 'vitest'
import { MissingPackageError } from '../../framework/io.js'
import { importOptional } from './optional-package.js'

describe('an optional store package, imported when its command runs', () => {
  it('missing: one line naming what to install', async () => {
    const load = () => import(['@affiliate-webhooks', 'not-installed-here'].join('/'))
    const error = await importOptional(
      load,
      ['@affiliate-webhooks/not-installed-here', 'pg'],
      '--postgres',
    ).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(MissingPackageError)
    expect((error as Error).message).toBe(
      '--postgres needs @affiliate-webhooks/not-installed-here and pg, which are not installed: npm install @affiliate-webhooks/not-installed-here pg',
    )
    expect((error as Error).message).not.toContain('\n')
  })

  it('another failure of the import is not called missing', async () => {
    const broken = new Error('boom')
    await expect(importOptional(() => Promise.reject(broken), ['pg'], 'sql')).rejects.toBe(broken)
  })

  it('installed: the module', async () => {
    const util = await importOptional(() => import('node:util'), ['node:util'], 'x')
    expect(typeof util.parseArgs).toBe('function')
  })
})
