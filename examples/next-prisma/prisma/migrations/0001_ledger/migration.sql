-- CreateTable
CREATE TABLE "ledger" (
    "conversion_id" BIGINT NOT NULL,
    "status" TEXT NOT NULL,
    "commission" DECIMAL(12,2),
    "currency" TEXT,
    "event_id" TEXT NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ledger_pkey" PRIMARY KEY ("conversion_id")
);
