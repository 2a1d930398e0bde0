import type { Conversion } from '@affiliate-webhooks/core'

/** The site's conversions table (in memory here; a database in a real site). */
export const conversions = new Map<number, Conversion>()

export function onConversion(conversion: Conversion): void {
  conversions.set(conversion.id, conversion)
}
