/**
 * examples/otel run as its README says (`npm start -w examples/otel`, here its
 * `tsx src/main.ts`): what it prints to the console holds the delivery spans,
 * nested under the server span, and the metrics.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const exec = promisify(execFile)
const example = new URL('../../examples/otel/', import.meta.url).pathname

describe('examples/otel', () => {
  it('prints the spans and metrics of its three deliveries', async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: example,
      env: { ...process.env, AFFILIATE_WEBHOOK_SECRET: '' },
    })
    expect(stdout).toContain('--- a new event: 200 {"received":true,"outcome":"processed"}')
    expect(stdout).toContain(
      '--- the same event again: 200 {"received":true,"outcome":"duplicate"}',
    )
    expect(stdout).toMatch(/--- signed with another secret: 401 .*signature_mismatch/)
    // ConsoleSpanExporter prints one object per span.
    const names = [...stdout.matchAll(/name: '([^']+)'/g)].map((m) => m[1])
    expect(names.filter((n) => n === 'affiliate_webhook.receive')).toHaveLength(3)
    expect(names.filter((n) => n === 'affiliate_webhook.handler')).toHaveLength(1)
    expect(names).toContain('conversions.upsert')
    expect(stdout).toContain("'affiliate_webhook.outcome': 'duplicate'")
    expect(stdout).toContain("'error.type': 'signature_mismatch'")
    // ConsoleMetricExporter prints each metric's descriptor.
    for (const metric of [
      'affiliate_webhook.deliveries',
      'affiliate_webhook.receive.duration',
      'affiliate_webhook.handler.duration',
      'affiliate_webhook.failure_streak',
    ]) {
      expect(stdout).toContain(`name: '${metric}'`)
    }
  }, 60_000)
})
