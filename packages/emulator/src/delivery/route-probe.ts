import { readReceiverAnswer } from '@affiliate-webhooks/core/internal'
import { sendAttempt } from './http-request.js'

/** Paths a webhook route is usually mounted on, tried after a 404. */
const USUAL_PATHS = [
  '/hooks',
  '/webhooks',
  '/webhook',
  '/api/webhooks',
  '/api/webhook',
  '/api/hooks',
  '/webhooks/affiliate',
  '/hooks/affiliate',
]

/**
 * After a receiver answered 404: looks for the path the app does route its
 * webhook on, on the same origin. An unsigned, empty POST is refused by this
 * library's receivers with 400 `missing_signature` before any handler runs, so
 * the probe has no effect on the app. Returns that URL, or undefined.
 */
export async function findWebhookRoute(
  url: string,
  timeoutMs = 2_000,
): Promise<string | undefined> {
  const tried = new URL(url)
  const candidates = USUAL_PATHS.filter((path) => path !== tried.pathname).map(
    (path) => new URL(path, tried.origin).href,
  )
  const answers = await Promise.all(
    candidates.map((candidate) =>
      sendAttempt({
        url: candidate,
        headers: { 'content-type': 'application/json' },
        body: '',
        timeoutMs,
      }),
    ),
  )
  const found = answers.findIndex(
    (answer) =>
      answer.responseStatus === 400 &&
      readReceiverAnswer(answer.responseBody).code === 'missing_signature',
  )
  return candidates[found]
}

/** 404 or 405 to a delivery: the app's route (its path or method) is not the endpoint's. */
export const isWrongRoute = (status: number | null | undefined): boolean =>
  status === 404 || status === 405
