// The JSON the page reads from /console/api (views.ts makes it) and the /v1 lists it calls.

/** An endpoint as the overview lists it: never its secret. */
export interface EndpointView {
  id: string
  url: string
  events: string[]
  status: string
  consecutiveFailures: number
  disabledAt: string | null
}

/** `GET /console/api/overview`. */
export interface Overview {
  now: string
  timeScale: number
  retryScheduleMs: number[]
  disableAfterFailures: number
  endpoints: EndpointView[]
  conversions: { id: number; status: string }[]
}

/** A row of `GET /console/api/deliveries`. */
export interface DeliveryRow {
  id: string
  webhookId: string
  eventId: string
  eventType: string
  conversionId: number | null
  status: string
  attemptsTotal: number
  createdAt: string
}

/** One attempt of a delivery's round. */
export interface AttemptView {
  attempt: number
  at: string
  ok: boolean
  result: string
  errorCode: string | null
  durationMs: number
  errorMessage: string | null
  answer: string | null
}

/** `GET /console/api/deliveries/{id}`. */
export interface DeliveryDetail extends DeliveryRow {
  rounds: AttemptView[][]
  next: string
  endpointUrl: string | null
}

/** A row of `GET /v1/programs`. */
export interface ProgramRow {
  id: number
  merchantName: string | null
  category: string | null
  payoutType: string | null
  approvalType: string | null
  status: string | null
}

/** A row of `GET /v1/programs/applications`. */
export interface ApplicationRow {
  applicationId: number
  programId: number
  merchantName: string | null
  channelId: number
  status: string
}

/** The envelope of every answer. */
export interface Answer<T = unknown> {
  success: boolean
  message: string
  data: T
  error?: { code?: string } | unknown[]
  pagination?: { lastPage?: number }
}
