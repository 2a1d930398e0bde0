import type { ReceiverOptions } from '@affiliate-webhooks/core'
import { affiliateWebhook } from '@affiliate-webhooks/web'
import type { HttpHandler } from '@azure/functions'

/**
 * The webhook as an Azure Functions v4 HTTP handler. v4's HttpRequest is a fetch
 * Request in all the web handler reads (method, headers, the body stream), so no
 * adapter of its own is needed; the answer goes back as an HttpResponseInit.
 */
export function hooksHandler(options: ReceiverOptions): HttpHandler {
  const webhook = affiliateWebhook(options)
  return async (request) => {
    const response = await webhook(request as unknown as Request)
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    return { status: response.status, headers, body: await response.text() }
  }
}
