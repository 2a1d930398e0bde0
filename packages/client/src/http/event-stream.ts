/** One server-sent event: its type (`message` unless named), data, and the last `id` seen. */
export interface StreamMessage {
  event: string
  data: string
  /** The stream's last event id so far, for `Last-Event-ID` on a reconnect. */
  id: string | undefined
}

/** The fields of the message being read, until a blank line ends it. */
interface Building {
  event: string
  data: string[]
}

/** Applies one line to `building`; returns the message when the line was the blank one ending it. */
function readLine(
  line: string,
  building: Building,
  state: { id: string | undefined },
): StreamMessage | undefined {
  if (line === '') {
    const { event, data } = building
    building.event = ''
    building.data = []
    // A message without data is not dispatched (the HTML standard's rule).
    if (data.length === 0) return undefined
    return { event: event || 'message', data: data.join('\n'), id: state.id }
  }
  if (line.startsWith(':')) return undefined
  const colon = line.indexOf(':')
  const field = colon === -1 ? line : line.slice(0, colon)
  let value = colon === -1 ? '' : line.slice(colon + 1)
  if (value.startsWith(' ')) value = value.slice(1)
  if (field === 'event') building.event = value
  else if (field === 'data') building.data.push(value)
  else if (field === 'id' && !value.includes('\0')) state.id = value
  return undefined
}

/**
 * The messages of a `text/event-stream` body as they arrive (lines ended by
 * CRLF, LF or CR; comments and `retry` ignored). Ends when the body does; a
 * message cut off by the end is dropped.
 */
export async function* readEventStream(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<StreamMessage> {
  const decoder = new TextDecoder()
  const building: Building = { event: '', data: [] }
  const state: { id: string | undefined } = { id: undefined }
  let pending = ''
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true })
    // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
    const complete = pending.endsWith('\r') ? pending.length - 1 : pending.length
    const lines = pending.slice(0, complete).split(/\r\n|\r|\n/)
    pending = (lines.pop() ?? '') + pending.slice(complete)
    for (const line of lines) {
      const message = readLine(line, building, state)
      if (message) yield message
    }
  }
}
