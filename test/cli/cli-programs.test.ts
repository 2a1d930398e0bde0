/**
 * The CLI's `programs`, `apply` and `applications` commands, run in-process
 * against the emulator over real HTTP: tables by default, --json, filters, and
 * the management commands' exit codes (2 usage, 3 refused).
 */
import { createClock } from '@affiliate-webhooks/emulator'
import { afterEach, describe, expect, it } from 'vitest'
import { main } from '../../packages/cli/src/main.js'
import { type Harness, startEmulator } from '../support/emulator-harness.js'

const KEY = `la_${'k'.repeat(32)}`
const START = Date.UTC(2026, 0, 5, 10, 0, 0)

const harnesses: Harness[] = []
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()))
})

async function setup() {
  const h = await startEmulator({ apiKeys: [KEY], clock: createClock({ start: START }) })
  harnesses.push(h)
  const cli = async (...args: string[]) => {
    let stdout = ''
    let stderr = ''
    const code = await main(args, {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: (async function* () {})(),
      env: { AFFILIATE_API_URL: h.base, AFFILIATE_API_KEY: KEY },
    })
    return { code, stdout, stderr }
  }
  return { h, cli }
}

describe('cli programs', () => {
  it('programs list: a table of every program, filters, --json', async () => {
    const { cli } = await setup()
    const all = await cli('programs', 'list')
    expect(all.code).toBe(0)
    const lines = all.stdout.trim().split('\n')
    expect(lines[0]).toMatch(
      /^ID\s+MERCHANT\s+CATEGORY\s+TYPE\s+PAYOUT\s+COOKIE\s+APPROVAL\s+STATUS$/,
    )
    expect(lines).toHaveLength(9)
    expect(all.stdout).toMatch(
      /41\s+Kaffeewerk\s+food_drink\s+cps\s+5\.95%\s+30d\s+manual\s+not_applied/,
    )
    expect(all.stdout).toMatch(/46\s+Reisefieber\s+travel\s+cps\s+31\.50 EUR/)
    const manual = await cli(
      'programs',
      'list',
      '--approval',
      'manual',
      '--payout-type',
      'cps',
      '--json',
    )
    expect(manual.code).toBe(0)
    expect(JSON.parse(manual.stdout).map((p: { id: number }) => p.id)).toEqual([46, 41])
    const search = await cli('programs', 'list', '--search', 'garten', '--category', 'home_garden')
    expect(search.stdout).toContain('Gartenglück')
    expect(search.stdout.trim().split('\n')).toHaveLength(2)
    const none = await cli('programs', 'list', '--status', 'approved', '--channel', '7')
    expect(none).toMatchObject({ code: 0, stdout: 'no programs match\n' })
  })

  it('programs get: one program as rows, --json; unknown is exit 3 with one line', async () => {
    const { cli } = await setup()
    const one = await cli('programs', 'get', '40')
    expect(one.code).toBe(0)
    expect(one.stdout).toMatch(/^id\s+40$/m)
    expect(one.stdout).toMatch(/^payout\s+7\.00% \(cps\)$/m)
    expect(one.stdout).toMatch(/^regions\s+DE, AT, CH$/m)
    const json = await cli('programs', 'get', '41', '--channel', '7', '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({ id: 41, payout: '5.95', status: 'not_applied' })
    const missing = await cli('programs', 'get', '9999')
    expect(missing.code).toBe(3)
    expect(missing.stderr).toMatch(/program_not_found/)
    expect(missing.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('wrong usage is exit 2 with one line and a hint', async () => {
    const { cli } = await setup()
    for (const args of [
      ['programs'],
      ['programs', 'show'],
      ['programs', 'list', '--payout-type', 'cpa'],
      ['programs', 'list', '--status', 'won'],
      ['programs', 'get', 'abc'],
      ['programs', 'list', '--channel', 'seven'],
      ['apply', '40'],
      ['apply', '--channel', '7'],
      ['apply', '40', '--channel', '7', '--note', 'x'.repeat(501)],
      ['applications'],
      ['applications', 'list', '--status', 'not_applied'],
    ]) {
      const result = await cli(...args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr, args.join(' ')).toMatch(/--help" for usage/)
      expect(result.stdout).toBe('')
    }
  })
})

describe('cli apply and applications', () => {
  it('apply: approved or pending; a second time exit 3 naming the existing application; applications list shows them', async () => {
    const { h, cli } = await setup()
    const auto = await cli('apply', '40', '--channel', '7', '--note', 'We review outdoor gear.')
    expect(auto.code).toBe(0)
    expect(auto.stdout).toMatch(/^approved: program 40 on channel 7 \(application \d+\)/)
    const manual = await cli('apply', '41', '--channel', '7', '--json')
    expect(manual.code).toBe(0)
    const pending = JSON.parse(manual.stdout)
    expect(pending).toMatchObject({ status: 'pending', decidedAt: null })
    const again = await cli('apply', '41', '--channel', '7')
    expect(again.code).toBe(3)
    expect(again.stderr).toBe(
      `affiliate-webhooks apply: channel 7 already applied to program 41: application ${pending.applicationId} is pending (a rejection cannot be re-applied through the API)\n`,
    )
    const unverified = await h.call('POST', '/emulator/channels', {
      body: { domain: 'fresh.example', verified: false },
    })
    const refused = await cli('apply', '40', '--channel', String(unverified.body.data.id))
    expect(refused.code).toBe(3)
    expect(refused.stderr).toMatch(/channel_not_verified/)
    const list = await cli('applications', 'list')
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(
      /^APPLICATION\s+PROGRAM\s+MERCHANT\s+CHANNEL\s+STATUS\s+APPLIED\s+DECIDED/,
    )
    expect(list.stdout).toMatch(/41\s+Kaffeewerk\s+7\s+pending/)
    expect(list.stdout).toMatch(/40\s+Nordlicht Outdoor\s+7\s+approved/)
    const filtered = await cli('applications', 'list', '--status', 'pending', '--json')
    expect(
      JSON.parse(filtered.stdout).map((a: { applicationId: number }) => a.applicationId),
    ).toEqual([pending.applicationId])
    const byProgram = await cli(
      'applications',
      'list',
      '--program',
      '40',
      '--channel',
      '7',
      '--json',
    )
    expect(JSON.parse(byProgram.stdout)).toHaveLength(1)
  })

  it('emulator --catalog with a file that is not there: exit 1, one line', async () => {
    let stderr = ''
    const code = await main(['emulator', '--port', '0', '--catalog', '/nonexistent/catalog.json'], {
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: (async function* () {})(),
      env: {},
    })
    expect(code).toBe(1)
    expect(stderr).toMatch(/^affiliate-webhooks emulator: catalogue \/nonexistent\/catalog\.json: /)
    expect(stderr.trim().split('\n')).toHaveLength(1)
  })
})
