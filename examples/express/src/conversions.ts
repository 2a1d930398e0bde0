import type { Conversion } from '@affiliate-webhooks/core'

/**
 * The publisher's "conversions" table, in memory. A plain upsert by conversion id
 * is enough: duplicates and older updates never reach the handler.
 */
export function conversionsTable() {
  const rows = new Map<number, Conversion & { updatedAt: string }>()
  return {
    upsert(conversion: Conversion): void {
      rows.set(conversion.id, { ...conversion, updatedAt: new Date().toISOString() })
    },
    list: () => [...rows.values()],
  }
}

export type ConversionsTable = ReturnType<typeof conversionsTable>
