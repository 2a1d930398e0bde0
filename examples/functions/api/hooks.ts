import { webhook } from '../src/webhook.js'

// Vercel Functions (Node runtime): one export per method; Vercel answers 405 to the rest.
export function POST(request: Request) {
  return webhook(request)
}
