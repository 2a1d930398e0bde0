/** A conversion as `POST /emulator/conversions` takes it, and as events carry it. */
export interface ConversionRecord {
  id: number
  programId: number | null
  channelId: number | null
  status: string
  saleAmount: string | null
  commission: string | null
  currency: string | null
  occurredAt: string | null
}
