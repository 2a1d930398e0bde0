import type { Conversion } from '@affiliate-webhooks/core'

type Row = Conversion & { updatedAt: string }

/**
 * The publisher's "conversions" table, in memory. Next bundles each route on its
 * own, so the table lives on globalThis for the Node routes to share one copy
 * (Edge routes run in their own isolate and keep their own).
 */
const shared = globalThis as { conversionsTable?: Map<number, Row> }
shared.conversionsTable ??= new Map()
const rows = shared.conversionsTable

/** A plain upsert by conversion id: duplicates and older updates never reach the handler. */
export function upsertConversion(conversion: Conversion): void {
  rows.set(conversion.id, { ...conversion, updatedAt: new Date().toISOString() })
}

export function listConversions(): Row[] {
  return [...rows.values()]
}
