import { listConversions } from '../../../lib/conversions'

// What the webhooks wrote, for a look in the browser.
export const dynamic = 'force-dynamic'

export function GET(): Response {
  return Response.json(listConversions())
}
