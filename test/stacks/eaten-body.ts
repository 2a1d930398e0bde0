/**
 * Each stack's usual mistake, against its built app: code in front of the webhook
 * (middleware, a hook) reads the body when the request carries `x-eat-body: 1`.
 * The webhook must answer 500 raw_body_unavailable within 5 s, never hang, and the
 * log line must carry status, code, event id and that stack's fix.
 */
import { buildConversionEvent } from '@affiliate-webhooks/core/testing'
import { expect, it } from 'vitest'
import { SECRET, send } from '../support/conformance-cases.js'
import type { BuiltStack } from './built-stack.js'

export function eatenBodyCase(stack: BuiltStack, fix: RegExp, path = '/hooks'): void {
  it('answers 500 raw_body_unavailable within 5 s when middleware read the body first; the log line names the fix', async () => {
    const adapter = stack.adapter('eaten')
    const logged: string[] = []
    const app = await adapter.start({
      secret: SECRET,
      onConversion: () => {},
      logger: {
        warn: (line: string) => logged.push(line),
        error: (line: string) => logged.push(line),
      },
    })
    try {
      const event = buildConversionEvent()
      const started = performance.now()
      const answer = await send(app.url.replace(/\/hooks$/, path), event, {
        headers: { 'x-eat-body': '1' },
      })
      expect(performance.now() - started).toBeLessThan(5_000)
      expect(answer).toMatchObject({
        status: 500,
        json: { error: { code: 'raw_body_unavailable' } },
      })
      expect(logged).toHaveLength(1)
      expect(logged[0]).toMatch(
        new RegExp(
          `^affiliate-webhooks: 500 raw_body_unavailable ${event.id} \\(unverified id, attempt 1\\): `,
        ),
      )
      expect(logged[0]).toMatch(fix)
    } finally {
      await app.close()
    }
  })
}
