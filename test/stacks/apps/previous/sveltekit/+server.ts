import type { RequestHandler } from '@sveltejs/kit'
import { webhook } from '$lib/server/webhook'

// SvelteKit 2: `$lib` (Kit 3 uses the package.json import `#lib`).
export const POST: RequestHandler = ({ request }) => webhook(request)
export const fallback = POST
