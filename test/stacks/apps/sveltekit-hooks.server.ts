// The usual SvelteKit mistake, added to the test's copy only: a handle hook that
// reads the body (here when the request says so).
import type { Handle } from '@sveltejs/kit'

export const handle: Handle = async ({ event, resolve }) => {
  if (event.request.headers.get('x-eat-body') === '1') await event.request.json()
  return resolve(event)
}
