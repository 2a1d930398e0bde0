import { WebhookError } from '../errors.js'

/**
 * Where the current secrets come from when they can change while the process
 * runs: a rotation then needs no restart. The receiver asks once before the
 * first delivery, and again, at most once per `refreshIntervalMs`, when a
 * signature matches none of the secrets it has.
 */
export interface SecretSource {
  /** The endpoint's current secrets (`whsec_...`), newest first. */
  getSecrets(): readonly string[] | Promise<readonly string[]>
  /** Least time between two asks after a mismatch, ms. Default 5000. */
  refreshIntervalMs?: number | undefined
  /**
   * Said in the receiver's `secret_unavailable` log line when the source gives
   * no secrets: where it looked and how to fill it.
   */
  emptyHint?: string | undefined
}

/** True for a {@link SecretSource} (anything with `getSecrets`). */
export const isSecretSource = (value: unknown): value is SecretSource =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as SecretSource).getSecrets === 'function'

/** Default least time between two asks of a {@link SecretSource}, ms. */
export const DEFAULT_SECRET_REFRESH_MS = 5_000

/**
 * How old the secrets may grow while signatures keep matching, ms: past it they
 * are asked for again in the background, so a secret whose grace period ended
 * (say, after a leak) stops verifying within a minute, not at the next restart.
 */
export const SECRET_MAX_AGE_MS = 60_000

/**
 * One process's view of a {@link SecretSource}: the last secrets it gave, and
 * the rate limit on asking again. Concurrent deliveries share one ask.
 */
export class SecretKeeper {
  #secrets: readonly string[] | undefined
  #askedAt = Number.NEGATIVE_INFINITY
  #loadedAt = Number.NaN
  #asking: Promise<readonly string[]> | undefined
  readonly #source: SecretSource
  readonly #interval: number
  readonly #check: (secrets: readonly unknown[]) => readonly string[]

  constructor(source: SecretSource, check: (secrets: readonly unknown[]) => readonly string[]) {
    this.#source = source
    this.#interval = source.refreshIntervalMs ?? DEFAULT_SECRET_REFRESH_MS
    this.#check = check
    if (!(this.#interval >= 0)) throw new TypeError('secret source: refreshIntervalMs must be >= 0')
  }

  /** The secrets last loaded, or undefined before the first load. */
  get current(): readonly string[] | undefined {
    return this.#secrets
  }

  /** The secrets, loading them first if this is the first delivery. */
  load(): readonly string[] | Promise<readonly string[]> {
    return this.#secrets ?? this.#ask()
  }

  /**
   * Asks again after a mismatch, unless it was asked less than the interval ago
   * (so bad signatures cannot hammer the source): then undefined.
   */
  refresh(now: number): Promise<readonly string[]> | undefined {
    if (this.#asking) return this.#asking
    if (now - this.#askedAt < this.#interval) return undefined
    // Only asks after a mismatch count: the first load is not a reason to wait.
    this.#askedAt = now
    return this.#ask()
  }

  /** After a match: asks again in the background when the secrets are over a minute old. */
  freshen(now: number): void {
    // The first match after a load starts the clock, on the receiver's own clock.
    if (Number.isNaN(this.#loadedAt)) this.#loadedAt = now
    if (this.#asking || now - this.#loadedAt < SECRET_MAX_AGE_MS) return
    this.#loadedAt = now
    // Failures keep the secrets it has; the next mismatch or minute asks again.
    this.#ask().catch(() => {})
  }

  #ask(): Promise<readonly string[]> {
    if (this.#asking) return this.#asking
    const asking = (async () => {
      let secrets: readonly string[]
      try {
        const got = await this.#source.getSecrets()
        if (!Array.isArray(got) || got.length === 0) {
          const hint = this.#source.emptyHint
          throw new TypeError(`it returned no secrets${hint ? `: ${hint}` : ''}`)
        }
        secrets = this.#check(got)
      } catch (error) {
        throw new WebhookError(
          'secret_unavailable',
          'The current signing secrets could not be loaded; try again.',
          { cause: error },
        )
      }
      this.#secrets = Object.freeze([...secrets])
      this.#loadedAt = Number.NaN
      return this.#secrets
    })()
    this.#asking = asking
    const done = () => {
      if (this.#asking === asking) this.#asking = undefined
    }
    asking.then(done, done)
    return asking
  }
}
