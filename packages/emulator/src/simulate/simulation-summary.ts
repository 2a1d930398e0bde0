import type { SimulationReport } from './run-simulation.js'

/** The machine-readable summary: everything but the per-event lists. */
export function simulationSummary(report: SimulationReport) {
  return {
    ok: report.ok,
    aborted: report.aborted,
    url: report.url,
    settings: report.settings,
    events: report.stats.events,
    notQueued: report.stats.notQueued,
    deliveries: report.stats.deliveries,
    replays: report.stats.replays,
    heldBack: report.heldBack,
    attempts: report.stats.attempts,
    statusCodes: report.stats.statusCodes,
    outcomes: report.stats.outcomes,
    endpoint: report.stats.endpoint,
    realElapsedMs: Math.round(report.stats.realElapsedMs),
    serviceElapsedMs: Math.round(report.stats.serviceElapsedMs),
    failed: report.failed.map((delivery) => ({
      id: delivery.id,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      conversionId: delivery.conversionId,
      failedBecause: delivery.failedBecause,
      attempts: delivery.attempts.map(
        ({ attempt, responseStatus, responseBody, errorMessage, durationMs }) => ({
          attempt,
          responseStatus,
          responseBody,
          errorMessage,
          durationMs,
        }),
      ),
    })),
  }
}
