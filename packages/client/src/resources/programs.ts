import { PAGE_SIZE, walkPages } from '../http/page-walk.js'
import type { Transport } from '../http/transport.js'
import type { ApprovalType, PayoutType, Program, ProgramStatus, ProgramSummary } from '../types.js'
import type { CallOptions } from './webhooks.js'

/** Filters of {@link ProgramsResource.list}, combined with AND. */
export interface ProgramFilters extends CallOptions {
  /** Matches the merchant's name or domain. */
  search?: string | undefined
  /** A category slug (`home_garden`). */
  category?: string | undefined
  payoutType?: PayoutType | undefined
  approvalType?: ApprovalType | undefined
  /** Report `status` for this channel; without it, the best state across the account's channels. */
  channelId?: number | undefined
  /** Matches the status as returned, so it follows channelId. */
  status?: ProgramStatus | undefined
  /** Rows per request, 1 to 100. Default 100: fewer requests against the rate limit. */
  size?: number | undefined
}

/** `api.programs`: the catalogue of merchant programs. */
export class ProgramsResource {
  readonly #http: Transport

  constructor(transport: Transport) {
    this.#http = transport
  }

  /**
   * Every program matching the filters, newest first, across all pages. The
   * service pages by offset and the catalogue changes during a walk, so each
   * program id is yielded once.
   */
  list(filters: ProgramFilters = {}): AsyncGenerator<ProgramSummary> {
    const { signal, size = PAGE_SIZE, ...query } = filters
    return walkPages(
      (page) =>
        this.#http.call<ProgramSummary[]>(
          { method: 'GET', path: '/v1/programs', query: { ...query, page, size }, signal },
          'repeat',
        ),
      size,
      (program) => program.id,
    )
  }

  /**
   * One program with its description, regions and logo; `status` for
   * `channelId` when given. `ServiceError` `program_not_found` for an unknown,
   * removed or deactivated one.
   */
  async get(
    id: number,
    options: CallOptions & { channelId?: number | undefined } = {},
  ): Promise<Program> {
    return (
      await this.#http.call<Program>(
        {
          method: 'GET',
          path: `/v1/programs/${encodeURIComponent(String(id))}`,
          query: { channelId: options.channelId },
          signal: options.signal,
        },
        'repeat',
      )
    ).data
  }
}
