/**
 * Secrets kept in Redis as people read them: what `endpoints create --redis`,
 * `rotate` and `secrets put` print. Never a whole secret: each by its last
 * four characters.
 */
import type { KeptSecret } from '@affiliate-webhooks/redis/internal'

/** A secret the key holds, and until when it verifies (null: the current one). */
export interface HeldSecret {
  secret: string
  expiresAt: number | null
}

/** What a Redis key holds, in one line: each secret by its last four characters and until when it verifies. */
export function formatHeldSecrets(key: string, held: readonly HeldSecret[]): string {
  const list = held.map(
    ({ secret, expiresAt }) =>
      `...${secret.slice(-4)} (${expiresAt === null ? 'current' : `verifies until ${new Date(expiresAt).toISOString()}`})`,
  )
  const only = held.length === 1 ? '; a delivery signed with any other secret will not verify' : ''
  return `Redis key ${key} holds ${held.length} secret${held.length === 1 ? '' : 's'}: ${list.join(', ')}${only}`
}

/** The lines after a secret shown once was kept: the key, and after a rotation what it holds. */
export function formatKeptSecret(kept: KeptSecret): string[] {
  const stored = `secret stored first in Redis key ${kept.key}`
  return kept.held === null ? [stored] : [stored, formatHeldSecrets(kept.key, kept.held)]
}
