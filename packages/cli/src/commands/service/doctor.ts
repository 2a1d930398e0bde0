import { costText } from '../../text/service/pacing-text.js'
import { manageCommand } from '../support/manage-options.js'

/** How many recent deliveries doctor reads. */
export const RECENT = 100

export const doctor = manageCommand({
  endpointIds: true,
  usage: ['doctor <endpointId>'],
  about: `Reads the endpoint and its ${RECENT} most recent deliveries and explains: disabled
and why, the failure streak and how close it is to the service's limit of 20, what
the receiver's answers mean (401 signature_mismatch: the secret or the body
changed; 409: still in flight; timeouts: a handler slower than 10 s; refused
connections: URL or firewall), and which command fixes each. Exit code 1 when it
found a problem.

${costText('doctor')}`,
  options: {},
})
