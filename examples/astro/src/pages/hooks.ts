import type { APIRoute } from 'astro'
import { webhook } from '../lib/webhook'

// The one line: every method goes to the handler, which answers 405 to all but POST.
export const ALL: APIRoute = ({ request }) => webhook(request)
