import type { Diagnosis } from '@affiliate-webhooks/core'

/**
 * A {@link Diagnosis} as a person reads it: verified and the event, or does not
 * verify and the code; then the message, the causes when several, and each hint.
 */
export function formatDiagnosis(diagnosis: Diagnosis): string {
  const lines = diagnosis.verified
    ? [`verified: ${diagnosis.event?.type} ${diagnosis.event?.id}`]
    : [`does not verify: ${diagnosis.code}`]
  lines.push(`  ${diagnosis.message}`)
  if (diagnosis.causes.length > 1) lines.push(`  causes: ${diagnosis.causes.join(', ')}`)
  for (const hint of diagnosis.hints) lines.push(`  - ${hint}`)
  return lines.join('\n')
}
