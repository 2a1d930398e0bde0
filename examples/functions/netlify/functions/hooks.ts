import { webhook } from '../../src/webhook.js'

// Netlify Functions 2.0: Request in, Response out; every method reaches it.
export default async (request: Request) => webhook(request)

export const config = { path: '/hooks' }
