// The usual React Router mistake, in the test's copy only: an action that reads the
// body before handing the request to the webhook (here when the request says so).
import { webhook } from '../lib/webhook'

export const action = async ({ request }: { request: Request }) => {
  if (request.headers.get('x-eat-body') === '1') await request.json()
  return webhook(request)
}
