// Stands in for Prisma's schema engine, which `prisma generate` downloads before it
// starts (from binaries.prisma.sh, outside the npm registry) and then never runs:
// prisma-clients.ts points PRISMA_SCHEMA_ENGINE_BINARY here. A command that does
// run the engine (migrate, db push) fails with this line instead of doing nothing.
console.error('no Prisma schema engine on this machine: create the tables with SQL')
process.exit(1)
