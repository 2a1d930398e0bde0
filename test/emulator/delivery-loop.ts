/**
 * A small sender for stream tests: delivers signed events with bounded
 * concurrency and retries every non-2xx like the service does (re-signed, with
 * the attempt number), only much faster.
 */
import type { AnyWebhookEvent } from '@affiliate-webhooks/core'
import { signedDelivery } from '@affiliate-webhooks/core/testing'

export interface Answer {
  eventId: string
  attempt: number
  status: number
  outcome?: string
  code?: string
  startedAt: number
  endedAt: number
}

export interface DeliverOptions {
  secret: string
  /** Picks the receiver URL for each attempt (e.g. a random process). */
  url: () => string
  concurrency: number
  retryDelayMs?: number
  maxAttempts?: number
  onAnswer?: (answer: Answer) => void
}

export async function deliverAll(
  events: AnyWebhookEvent[],
  options: DeliverOptions,
): Promise<Answer[]> {
  const answers: Answer[] = []
  const queue = [...events]
  const { retryDelayMs = 25, maxAttempts = 400 } = options
  const deliverOne = async (event: AnyWebhookEvent) => {
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const { headers, body } = await signedDelivery({ secret: options.secret, event, attempt })
      const startedAt = Date.now()
      let answer: Answer
      try {
        const response = await fetch(options.url(), { method: 'POST', headers, body })
        const json = (await response.json().catch(() => ({}))) as {
          outcome?: string
          error?: { code?: string }
        }
        answer = {
          eventId: event.id,
          attempt,
          status: response.status,
          startedAt,
          endedAt: Date.now(),
        }
        if (json.outcome) answer.outcome = json.outcome
        if (json.error?.code) answer.code = json.error.code
      } catch {
        answer = { eventId: event.id, attempt, status: 0, startedAt, endedAt: Date.now() }
      }
      answers.push(answer)
      options.onAnswer?.(answer)
      if (answer.status >= 200 && answer.status < 300) return
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs))
    }
    throw new Error(`${event.id} was never acknowledged`)
  }
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let event = queue.shift(); event; event = queue.shift()) await deliverOne(event)
    }),
  )
  return answers
}
