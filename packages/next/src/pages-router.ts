import { createNodeAdapter } from '@affiliate-webhooks/node'
import type { NextApiHandler } from 'next'
import type { NextWebhookOptions } from './app-router.js'

/**
 * Pages Router: `export default affiliateWebhookPages(opts)` in `pages/api/...`,
 * next to `export const config = { api: { bodyParser: false } }` (a literal Next
 * reads at build time, so it must be written in the route file itself).
 */
export function affiliateWebhookPages<Tx = undefined>(
  options: NextWebhookOptions<Tx>,
): NextApiHandler {
  // `next build` loads route modules without the runtime secrets: the receiver
  // (which checks `secret`) is made on the first request.
  const { answer } = createNodeAdapter(() => options, {
    name: '@affiliate-webhooks/next',
    adapter: 'next-pages',
  })
  return (req, res) => answer(req, res)
}
