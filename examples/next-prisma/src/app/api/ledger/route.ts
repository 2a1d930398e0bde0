import { prisma } from '../../../lib/db'

export const dynamic = 'force-dynamic'

/** The ledger, newest first: what the handler wrote. */
export async function GET(): Promise<Response> {
  const rows = await prisma.ledger.findMany({ orderBy: { updatedAt: 'desc' }, take: 100 })
  return Response.json(
    rows.map((row) => ({
      conversionId: Number(row.conversionId),
      status: row.status,
      commission: row.commission?.toFixed(2) ?? null,
      currency: row.currency,
      eventId: row.eventId,
    })),
  )
}
