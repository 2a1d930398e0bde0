import type { Delivery } from '@affiliate-webhooks/client'
import { MAX_ATTEMPTS } from '@affiliate-webhooks/emulator'
import type { Handler } from '../../framework/command.js'
import { EXIT, output } from '../../framework/io.js'
import { formatHealthFindings } from '../../text/service/endpoint-text.js'
import { checkEndpointHealth } from '../../text/service/health-findings.js'
import { onlyArgument, withClient } from '../support/service-command.js'
import type { doctor } from './doctor.js'

/** How many recent deliveries doctor reads. */
const RECENT = 100

/** Runs `doctor`. */
export const run: Handler<typeof doctor.options> = async (values, io, positionals) => {
  const id = onlyArgument(positionals, 'endpoint id')
  return withClient('doctor', values, io, async (api) => {
    const endpoint = await api.webhooks.get(id)
    const recent: Delivery[] = []
    for await (const delivery of api.webhooks.deliveries(id)) {
      recent.push(delivery)
      if (recent.length >= RECENT) break
    }
    const findings = checkEndpointHealth(endpoint, recent, { maxAttempts: MAX_ATTEMPTS })
    output(io, values, { endpoint, findings }, formatHealthFindings(endpoint, findings))
    return findings.some((f) => f.level === 'problem') ? EXIT.failed : EXIT.ok
  })
}
