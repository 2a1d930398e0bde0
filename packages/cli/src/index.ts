// The CLI run from code: `main(argv, io)` resolves to the exit code. What the
// commands drive lives in the packages that own it (the engine, the simulation
// in @affiliate-webhooks/emulator, signature diagnosis in core); the lines they
// print live here, in src/text.
export type { Io } from './commands/io.js'
export { main } from './commands/main.js'
export {
  formatSimulationProgress,
  formatSimulationSummary,
} from './text/simulation-text.js'
