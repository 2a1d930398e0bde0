import type { Delivery } from '@affiliate-webhooks/client'
import { MAX_ATTEMPTS } from '@affiliate-webhooks/emulator'
import { EXIT, output } from '../../framework/io.js'
import { formatHealthFindings } from '../../text/service/endpoint-text.js'
import { checkEndpointHealth } from '../../text/service/health-findings.js'
import { costText } from '../../text/service/pacing-text.js'
import { manageCommand, onlyArgument, withClient } from '../support/service-command.js'

/** How many recent deliveries doctor reads. */
const RECENT = 100

export const doctor = manageCommand({
  name: 'doctor',
  summary: 'explain in words what is wrong with an endpoint, and the command that fixes it',
  usage: ['doctor <endpointId>'],
  about: `Reads the endpoint and its ${RECENT} most recent deliveries and explains: disabled
and why, the failure streak and how close it is to the service's limit of 20, what
the receiver's answers mean (401 signature_mismatch: the secret or the body
changed; 409: still in flight; timeouts: a handler slower than 10 s; refused
connections: URL or firewall), and which command fixes each. Exit code 1 when it
found a problem.

${costText('doctor')}`,
  options: {},
  async run(values, io, positionals) {
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
  },
})
