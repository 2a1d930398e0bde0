import type { RequestHandler } from '@sveltejs/kit'
import { webhook } from '#lib/server/webhook'

// The one line; `fallback` sends every other method to it too (answered 405).
export const POST: RequestHandler = ({ request }) => webhook(request)
export const fallback = POST
