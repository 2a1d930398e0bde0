import { ServiceError } from '../http/errors.js'
import { PAGE_SIZE } from '../http/page-walk.js'
import { isAmbiguous, type Transport } from '../http/transport.js'
import type {
  CreateWebhookInput,
  Delivery,
  DeliveryStatus,
  ReplayResult,
  TestEventResult,
  UpdateWebhookInput,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../types.js'

/** Per-call options every method takes. */
export interface CallOptions {
  /** Cancels the call, including any wait for the rate limit or a back-off. */
  signal?: AbortSignal
}

/** Filters and paging of {@link WebhooksResource.deliveries}. */
export interface DeliveriesOptions extends CallOptions {
  status?: DeliveryStatus | undefined
  /** Only deliveries created at or after this time (the walk stops at the first older one). */
  since?: Date | undefined
  /** Rows per request, 1 to 100. Default 100: fewer requests against the rate limit. */
  size?: number
}

const path = (id: string) => `/v1/webhooks/${encodeURIComponent(id)}`

/** `api.webhooks`: the service's `/v1/webhooks` routes. */
export class WebhooksResource {
  readonly #http: Transport

  constructor(transport: Transport) {
    this.#http = transport
  }

  /**
   * Registers an endpoint and returns it with its secret. The service takes no
   * idempotency key, so a create whose answer was lost is never simply sent
   * again: the client lists the endpoints, and if one with this URL (compared
   * in canonical form: the service may store `https://example.com` as
   * `https://example.com/`) and these
   * events appeared that was not there before, that is the one it made. Its
   * secret was in the lost answer, so the client rotates it to return one that
   * works. Otherwise it creates again.
   */
  async create(
    input: CreateWebhookInput,
    options: CallOptions = {},
  ): Promise<WebhookEndpointWithSecret> {
    const before = new Set((await this.list(options)).map((endpoint) => endpoint.id))
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await this.#http.call<WebhookEndpointWithSecret>(
          { method: 'POST', path: '/v1/webhooks', body: input, signal: options.signal },
          'once',
        )
        return answer.data
      } catch (error) {
        if (!isAmbiguous(error) || attempt >= this.#http.retry.retries) throw error
        const made = (await this.list(options)).find(
          (endpoint) =>
            !before.has(endpoint.id) &&
            canonicalUrl(endpoint.url) === canonicalUrl(input.url) &&
            sameEvents(endpoint.events, input.events),
        )
        if (made) return this.rotateSecret(made.id, options)
        await this.#http.backoff(attempt, options.signal)
      }
    }
  }

  /** Every endpoint of the account, newest first. */
  async list(options: CallOptions = {}): Promise<WebhookEndpoint[]> {
    return (
      await this.#http.call<WebhookEndpoint[]>(
        { method: 'GET', path: '/v1/webhooks', signal: options.signal },
        'repeat',
      )
    ).data
  }

  /** One endpoint; `ServiceError` `webhook_not_found` when there is none. */
  async get(id: string, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return (
      await this.#http.call<WebhookEndpoint>(
        { method: 'GET', path: path(id), signal: options.signal },
        'repeat',
      )
    ).data
  }

  /** Changes any subset of url, events, description, status. Setting the same values twice is harmless, so it is retried. */
  async update(
    id: string,
    changes: UpdateWebhookInput,
    options: CallOptions = {},
  ): Promise<WebhookEndpoint> {
    return (
      await this.#http.call<WebhookEndpoint>(
        { method: 'PATCH', path: path(id), body: changes, signal: options.signal },
        'repeat',
      )
    ).data
  }

  /**
   * Deletes an endpoint. Retried after a lost answer; a retry that finds the
   * endpoint gone (`webhook_not_found`) is the earlier try having worked.
   */
  async delete(id: string, options: CallOptions = {}): Promise<void> {
    await this.#http.callSettled(
      { method: 'DELETE', path: path(id), signal: options.signal },
      'webhook_not_found',
    )
  }

  /**
   * Replaces the secret and returns the new one, once. Retried after a lost
   * answer: the secret that answer carried is unknown anyway, and the old one
   * is dead either way, so rotating again is what gets a usable secret.
   */
  async rotateSecret(id: string, options: CallOptions = {}): Promise<WebhookEndpointWithSecret> {
    return (
      await this.#http.call<WebhookEndpointWithSecret>(
        { method: 'POST', path: `${path(id)}/rotate-secret`, signal: options.signal },
        'repeat',
      )
    ).data
  }

  /**
   * Queues a `webhook.test` event for this endpoint. Never repeated after a lost
   * answer (a second test delivery would be a new event): the error says so, and
   * `deliveries()` shows whether the first one was queued.
   */
  async sendTest(id: string, options: CallOptions = {}): Promise<TestEventResult> {
    try {
      return (
        await this.#http.call<TestEventResult>(
          { method: 'POST', path: `${path(id)}/test`, signal: options.signal },
          'once',
        )
      ).data
    } catch (error) {
      if (!(error instanceof ServiceError) || !isAmbiguous(error)) throw error
      throw new ServiceError(
        error.status,
        error.code,
        `${error.message} (not repeated: the test event may have been queued; check the endpoint's deliveries)`,
        error,
        { cause: error },
      )
    }
  }

  /**
   * Every delivery of an endpoint, newest first, across all pages. The service
   * pages by offset, so a delivery made during the walk can shift a row onto the
   * next page: each delivery id is yielded once.
   */
  async *deliveries(id: string, options: DeliveriesOptions = {}): AsyncGenerator<Delivery> {
    const size = options.size ?? PAGE_SIZE
    const seen = new Set<string>()
    for (let page = 1; ; page++) {
      const { data } = await this.#http.call<Delivery[]>(
        {
          method: 'GET',
          path: `${path(id)}/deliveries`,
          query: { status: options.status, page, size },
          signal: options.signal,
        },
        'repeat',
      )
      for (const delivery of data) {
        if (seen.has(delivery.id)) continue
        seen.add(delivery.id)
        // Newest first: once one is older than `since`, so are the rest.
        if (options.since && Date.parse(delivery.createdAt ?? '') < options.since.getTime()) return
        yield delivery
      }
      if (data.length < size) return
    }
  }

  /**
   * Replays a `succeeded` or `failed` delivery: a new set of eight attempts with
   * the same event id. Retried after a lost answer; a retry answered 409
   * `delivery_not_replayable` is the earlier try having worked (the delivery is
   * pending again), reported as `already_replaying`.
   */
  async replay(id: string, deliveryId: string, options: CallOptions = {}): Promise<ReplayResult> {
    const answer = await this.#http.callSettled<unknown>(
      {
        method: 'POST',
        path: `${path(id)}/deliveries/${encodeURIComponent(deliveryId)}/replay`,
        signal: options.signal,
      },
      'delivery_not_replayable',
    )
    return answer
      ? { deliveryId, outcome: 'accepted', data: answer.data }
      : { deliveryId, outcome: 'already_replaying' }
  }
}

/** A URL as WHATWG writes it (host lowercased, default port and empty path normalised); as typed when it is not one. */
export function canonicalUrl(url: string): string {
  try {
    return new URL(url).href
  } catch {
    return url
  }
}

function sameEvents(a: readonly string[], b: readonly string[]) {
  const left = new Set(a)
  const right = new Set(b)
  return left.size === right.size && [...left].every((type) => right.has(type))
}
