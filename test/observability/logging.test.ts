/**
 * The default logger as a publisher meets it: a real Node process with the
 * built packages, a handler that throws, and what reaches stderr.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = new URL('../..', import.meta.url).pathname
const SECRET = 'whsec_logging_process_test'

const script = (logger: string) => `
import { createReceiver } from '@affiliate-webhooks/core'
import { buildConversionEvent, signedDelivery } from '@affiliate-webhooks/core/testing'
const receiver = createReceiver({
  secret: '${SECRET}',
  ${logger}
  onConversion() { throw new Error('CRM timed out') },
})
const event = buildConversionEvent()
const { headers, body } = await signedDelivery({ secret: '${SECRET}', event, attempt: 2 })
const answer = await receiver.receive({ headers, rawBody: new TextEncoder().encode(body) })
process.stdout.write(JSON.stringify({ id: event.id, status: answer.status }))
`

async function receiveIn(logger: string) {
  const { stdout, stderr } = await run(
    process.execPath,
    ['--input-type=module', '-e', script(logger)],
    {
      cwd: root,
    },
  )
  return { ...(JSON.parse(stdout) as { id: string; status: number }), stderr }
}

describe('default logger, in a real process', () => {
  it('a handler that throws: one entry on stderr naming the event, code and status, then its stack', async () => {
    const { id, status, stderr } = await receiveIn('')
    expect(status).toBe(500)
    const lines = stderr.trimEnd().split('\n')
    const entries = lines.filter((line) => !/^\s+at /.test(line))
    expect(entries).toEqual([
      `affiliate-webhooks: 500 handler_failed ${id} (conversion.created, attempt 2): handler threw Error: CRM timed out`,
    ])
    expect(lines.length).toBeGreaterThan(1)
    expect(stderr).not.toContain(SECRET)
  })

  it('logger: false: nothing on stderr', async () => {
    const { status, stderr } = await receiveIn('logger: false,')
    expect(status).toBe(500)
    expect(stderr).toBe('')
  })
})
