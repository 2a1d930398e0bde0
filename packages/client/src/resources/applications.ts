import { isDuplicateApplicationError } from '../http/duplicate-application-error.js'
import { PAGE_SIZE, walkPages } from '../http/page-walk.js'
import { isAmbiguous, type Transport } from '../http/transport.js'
import type {
  Application,
  ApplicationListEntry,
  ApplicationStatus,
  CreateApplicationInput,
} from '../types.js'
import type { CallOptions } from './webhooks.js'

/** Filters of {@link ApplicationsResource.list}. */
export interface ApplicationFilters extends CallOptions {
  status?: ApplicationStatus | undefined
  programId?: number | undefined
  channelId?: number | undefined
  /** Rows per request, 1 to 100. Default 100. */
  size?: number | undefined
}

/** `api.applications`: applying to programs per channel, and the account's applications. */
export class ApplicationsResource {
  readonly #http: Transport

  constructor(transport: Transport) {
    this.#http = transport
  }

  /**
   * Applies a channel to a program: approved at once for an `auto` program,
   * `pending` for a `manual` one. A channel that already applied (in any state)
   * throws {@link DuplicateApplicationError} with that application's id and
   * status. Applying twice has one effect (the second is 409), so a try whose
   * answer was lost is repeated; a repeat answered 409 is the lost try having
   * worked, and returns the application it made.
   */
  async create(input: CreateApplicationInput, options: CallOptions = {}): Promise<Application> {
    let ambiguous = false
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await this.#http.call<Application>(
          {
            method: 'POST',
            path: '/v1/programs/applications',
            body: input,
            signal: options.signal,
          },
          'once',
        )
        return answer.data
      } catch (error) {
        if (ambiguous && isDuplicateApplicationError(error)) {
          const filters = { programId: input.programId, channelId: input.channelId }
          const signal = options.signal ? { signal: options.signal } : {}
          for await (const row of this.list({ ...filters, ...signal })) {
            if (row.applicationId === error.applicationId) return row
          }
        }
        if (!isAmbiguous(error) || attempt >= this.#http.retry.retries) throw error
        ambiguous = true
        await this.#http.backoff(attempt, options.signal)
      }
    }
  }

  /** Every application of the account across channels, newest first, each once. */
  list(filters: ApplicationFilters = {}): AsyncGenerator<ApplicationListEntry> {
    const { signal, size = PAGE_SIZE, status, programId, channelId } = filters
    return walkPages(
      (page) =>
        this.#http.call<ApplicationListEntry[]>(
          {
            method: 'GET',
            path: '/v1/programs/applications',
            query: { status, programId, channelId, page, size },
            signal,
          },
          'repeat',
        ),
      size,
      (application) => application.applicationId,
    )
  }
}
