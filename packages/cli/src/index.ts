// The CLI's own API: the summary and progress lines `simulate` prints. What it
// drives lives in the packages that own it: the engine and `runSimulation` in
// @affiliate-webhooks/emulator, signature diagnosis in @affiliate-webhooks/core.
export { formatDuration, formatProgress, formatSummary } from './report.js'
