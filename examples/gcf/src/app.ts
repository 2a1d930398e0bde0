import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/node'
import { type HttpFunction, http } from '@google-cloud/functions-framework'

/**
 * Registers the webhook as the HTTP function `name`. The Functions Framework has
 * parsed the body before the function runs and kept its exact bytes in
 * `req.rawBody`, which the Node adapter verifies.
 */
export function registerHooks(name: string, options: ReceiverOptions): void {
  // The cast is this monorepo's: another package's types declare IncomingMessage.rawBody a string.
  http(name, affiliateWebhook(options) as unknown as HttpFunction)
}
