import { bigint, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** The publisher's own table: one row per conversion event credited. */
export const ledger = pgTable('example_ledger', {
  eventId: text('event_id').primaryKey(),
  conversionId: bigint('conversion_id', { mode: 'number' }).notNull(),
  status: text('status').notNull(),
  commission: numeric('commission', { precision: 12, scale: 2 }).notNull(),
  currency: text('currency').notNull(),
  creditedAt: timestamp('credited_at', { withTimezone: true }).notNull().defaultNow(),
})
