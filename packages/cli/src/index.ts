// The CLI run from code: `main(argv, io)` resolves to the exit code. What the
// commands drive lives in the packages that own it (the engine, the simulation
// and its text in @affiliate-webhooks/emulator, signature diagnosis in core).
export type { Io } from './framework/io.js'
export { main } from './main.js'
