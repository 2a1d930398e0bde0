/** What to tell someone whose app answered a delivery with 404 or 405, for the terminal. */
import { findWebhookRoute } from '@affiliate-webhooks/emulator/internal'

/**
 * What to tell someone whose app answered a delivery (a POST) to `url` with 404
 * or 405: the path or method is wrong, and, for a 404, the path its webhook
 * answers at when `findWebhookRoute` finds it.
 */
export async function routeHint(url: string, status: number): Promise<string> {
  const path = new URL(url).pathname
  if (status === 405) {
    return `the app routes ${path} but not POST there: deliveries are POSTs (app.post('${path}', affiliateWebhook(...)))`
  }
  const found = await findWebhookRoute(url)
  return found
    ? `the app has no route at ${path}; its webhook answers at ${found}`
    : `the app has no POST route at ${path}: use the path you mounted the webhook on (e.g. app.post('/hooks', affiliateWebhook(...)))`
}
