import { ANSWER_TIMEOUT_MS } from '@affiliate-webhooks/emulator'
import {
  runSimulation,
  type SimulationReport,
  simulationSummary,
} from '@affiliate-webhooks/emulator/internal'
import type { Handler } from '../../framework/command.js'
import {
  checkSecretShape,
  EXIT,
  type Io,
  interruptible,
  output,
  requireSecret,
  requireUrl,
} from '../../framework/io.js'
import {
  disabledUnderCompression,
  formatSimulationProgress,
  formatSimulationSummary,
} from '../../text/local/simulation-text.js'
import type { simulate } from './simulate.js'
import { DEFAULTS } from './simulate.js'

function progressWriter(io: Io) {
  if (io.stderr.isTTY) {
    return {
      intervalMs: 100,
      // Cut to the terminal's width: a wrapped line cannot be rewritten in place.
      write: (line: string) =>
        io.stderr.write(`\r${line.slice(0, (io.stderr.columns ?? 200) - 1)}\x1b[K`),
      end: () => io.stderr.write('\n'),
    }
  }
  // Logs and CI: a line now and then instead of a line rewritten in place.
  return { intervalMs: 2000, write: (line: string) => io.stderr.write(`${line}\n`), end: () => {} }
}

/** The summary as data; a rule of no limit (Infinity, which JSON cannot hold) as `"off"`. */
function simulationJson(report: SimulationReport) {
  const summary = simulationSummary(report)
  const limit = summary.settings.disableAfterFailures
  return {
    ...summary,
    settings: { ...summary.settings, disableAfterFailures: Number.isFinite(limit) ? limit : 'off' },
  }
}

/** Runs `simulate`. */
export const run: Handler<typeof simulate.options> = async (values, io) => {
  const url = requireUrl(values.url)
  const secret = requireSecret(values.secret, io)
  const windowMinutes = values.window
  const seed = values.seed
  const disableAfter = values['disable-after']
  checkSecretShape(secret, io)
  const progress = values.quiet ? undefined : progressWriter(io)
  const report = await interruptible(io, (signal) =>
    runSimulation({
      url,
      secret,
      conversions: values.conversions ?? DEFAULTS.conversions,
      duplicates: values.duplicates ?? DEFAULTS.duplicates,
      reorder: values.reorder ?? DEFAULTS.reorder,
      rejectRate: values['reject-rate'] ?? DEFAULTS.rejectRate,
      concurrency: values.concurrency ?? DEFAULTS.concurrency,
      timeScale: values['time-scale'] ?? DEFAULTS.timeScale,
      timeoutMs: values.timeout ?? ANSWER_TIMEOUT_MS,
      signal,
      ...(windowMinutes === undefined ? {} : { windowMs: windowMinutes * 60_000 }),
      ...(seed === undefined ? {} : { seed }),
      ...(disableAfter === undefined ? {} : { disableAfterFailures: disableAfter }),
      ...(progress
        ? {
            progressIntervalMs: progress.intervalMs,
            onProgress: (p) => progress.write(formatSimulationProgress(p)),
          }
        : {}),
    }),
  )
  progress?.end()
  const hint = disabledUnderCompression(report)
  output(
    io,
    values,
    { ...simulationJson(report), ...(hint ? { hint } : {}) },
    formatSimulationSummary(report),
  )
  return report.aborted ? EXIT.interrupted : report.ok ? EXIT.ok : EXIT.failed
}
