/** Why a captured delivery does or does not verify. */
export type DiagnosisCode =
  | 'verified'
  | 'missing_header'
  | 'malformed_header'
  | 'secret_without_prefix'
  | 'signed_without_prefix'
  | 'secret_whitespace'
  | 'body_trailing_newline'
  | 'body_missing_newline'
  | 'body_whitespace'
  | 'body_crlf'
  | 'body_lf'
  | 'body_bom'
  | 'body_bom_removed'
  | 'body_encoding'
  | 'body_reserialized'
  | 'timestamp_outside_tolerance'
  | 'invalid_event'
  | 'event_id_mismatch'
  | 'wrong_secret'

/** A captured delivery to check, as {@link diagnoseSignature} takes it. */
export interface DiagnoseOptions {
  /** The `Service-Signature` value as captured. */
  header: string | undefined
  /** The body exactly as captured. */
  body: Uint8Array
  /** The endpoint secret to check with, `whsec_` prefix included. */
  secret: string
  /** Seconds, checked as verification checks them (see `VerifyOptions.tolerance`). Default 300, the spec's five minutes. */
  tolerance?: number
  /** Epoch ms to check the timestamp against. Default now. */
  now?: number
  /** The `Service-Event-Id` header, when captured. */
  eventId?: string
}

/** The answer of {@link diagnoseSignature}: verifies or not, and the likely reason. */
export interface Diagnosis {
  /** True when a receiver with this secret would accept the delivery now. */
  verified: boolean
  /** The main reason; `verified` when it verifies. */
  code: DiagnosisCode
  /** One sentence: what is wrong, or that it verifies. */
  message: string
  /** Every change that makes the signature match, when one does (`code` is the first). */
  causes: DiagnosisCode[]
  /** What to check or change next. */
  hints: string[]
  /** The signature's `t`, seconds. */
  signedAt?: number
  /** now - t in whole seconds, as the tolerance is checked: positive when the signature is older than now. */
  ageSeconds?: number
  /** The tolerance checked against, seconds. */
  tolerance: number
  event?: { id: string; type: string }
}
