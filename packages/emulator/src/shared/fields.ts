import { type FieldError, validationError } from './api-error.js'

/** Collects the offending fields of one request, then throws them all at once. */
export class Fields {
  readonly errors: FieldError[] = []
  required(field: string) {
    this.errors.push({ field, code: 'required', message: `${field} is required.` })
  }
  invalid(field: string, message: string) {
    this.errors.push({ field, code: 'invalid_format', message: `${field} ${message}.` })
  }
  done() {
    if (this.errors.length > 0) throw validationError(this.errors)
  }
}

/** True for a plain object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A JSON body that must be an object (an absent body counts as `{}`). */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {}
  if (isObject(body)) return body
  throw validationError([
    { field: 'body', code: 'invalid_format', message: 'The body must be a JSON object.' },
  ])
}
