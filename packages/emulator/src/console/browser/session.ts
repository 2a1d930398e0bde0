import { $ } from './dom.js'
import type { Answer, Overview } from './types.js'

/** What the page knows between refreshes. */
export const state = {
  token: '',
  overview: null as Overview | null,
  openDelivery: null as string | null,
  refreshing: null as Promise<void> | null,
  again: false,
  /** Set by main.ts: reloads what the page shows (one at a time). */
  refresh: (): Promise<void> => Promise.resolve(),
  /** Set by main.ts: back to the sign-in form, with why. */
  signIn: (_message?: string): void => {},
}

/** The notice line: what happened, red when it failed. */
export function say(message: string, failed = false): void {
  const note = $('notice')
  note.textContent = message
  note.className = failed ? 'notice error' : 'notice'
}

/** A call to /console/api with the token; a refusal rejects with its message and code. */
export async function api<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const headers: Record<string, string> = { 'X-Console-Token': state.token }
  const init: RequestInit = { method, headers }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    headers['Content-Type'] = 'application/json'
  }
  const res = await fetch(`/console/api${path}`, init)
  const answer = (await res.json()) as Answer<T>
  if (res.status === 401 && path !== '/session') state.signIn('The console token is not valid.')
  if (!answer.success) {
    const error = answer.error as { code?: string } | undefined
    const code = error?.code ? ` (${error.code})` : ''
    throw new Error(answer.message + code)
  }
  return answer
}

/** A button's action: the call, its message in the notice, then a refresh. */
export function act<T>(method: string, path: string, body?: unknown, done?: (data: T) => void) {
  return api<T>(method, path, body)
    .then((answer) => {
      say(answer.message)
      done?.(answer.data)
      void state.refresh()
    })
    .catch((error: Error) => say(error.message, true))
}
