import type { Conversion, ConversionEvent, HandlerContext } from '@affiliate-webhooks/core'
import type { PrismaTransaction } from '@affiliate-webhooks/prisma'
import type { PrismaClient } from '../generated/prisma/client'

/**
 * One conversion's row at its newest status, written through `ctx.tx`: the
 * write and the store's "handled" mark commit together, so a retry after a
 * crash finds neither or both. The store never calls this with an older status
 * after a newer one (that event is answered `stale`).
 */
export async function recordConversion(
  conversion: Conversion,
  event: ConversionEvent,
  ctx: HandlerContext<PrismaTransaction<PrismaClient>>,
): Promise<void> {
  const { status, commission, currency } = conversion
  const row = { status, commission, currency, eventId: event.id }
  await ctx.tx.ledger.upsert({
    where: { conversionId: BigInt(conversion.id) },
    create: { conversionId: BigInt(conversion.id), ...row },
    update: row,
  })
}
