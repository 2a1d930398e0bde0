import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/express'
import { http } from '@google-cloud/functions-framework'

/**
 * Registers the webhook as the HTTP function `name`. The Functions Framework has
 * parsed the body before the function runs and kept its exact bytes in
 * `req.rawBody`, which the Express adapter verifies.
 */
export function registerHooks(name: string, options: ReceiverOptions): void {
  http(name, affiliateWebhook(options))
}
