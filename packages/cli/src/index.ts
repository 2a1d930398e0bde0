// The CLI run from code: `main(argv, io)` resolves to the exit code. What the
// commands drive lives in the packages that own it (the delivery engine and the
// simulation in @affiliate-webhooks/emulator, signature diagnosis in core, the
// service's API in the client); the lines they print are this package's (src/text/).
export type { Io } from './framework/io.js'
export { main } from './main.js'
export { formatSimulationProgress, formatSimulationSummary } from './text/local/simulation-text.js'
