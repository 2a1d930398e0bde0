import { describe, expect, it } from 'vitest'
import { readEventStream, type StreamMessage } from './event-stream.js'

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder()
  for (const part of parts) yield encoder.encode(part)
}

async function all(body: AsyncIterable<Uint8Array>): Promise<StreamMessage[]> {
  const found: StreamMessage[] = []
  for await (const message of readEventStream(body)) found.push(message)
  return found
}

describe('readEventStream', () => {
  it('reads named events, ids, multi-line data, and skips comments and retry', async () => {
    const found = await all(
      chunks(
        'retry: 1000\n\n',
        ': keepalive\n\n',
        'event: ready\ndata: {"status":"active"}\n\n',
        'id: 7\nevent: attempt\ndata: one\ndata: two\n\n',
        'data:plain\n\n',
      ),
    )
    expect(found).toEqual([
      { event: 'ready', data: '{"status":"active"}', id: undefined },
      { event: 'attempt', data: 'one\ntwo', id: '7' },
      { event: 'message', data: 'plain', id: '7' },
    ])
  })

  it('joins lines cut across chunks, a CRLF split between two, and CR alone', async () => {
    const found = await all(
      chunks('event: at', 'tempt\r', '\ndata: {"a"', ':1}\r\n\r\n', 'data: x\r\rdata: y\n'),
    )
    expect(found).toEqual([
      { event: 'attempt', data: '{"a":1}', id: undefined },
      { event: 'message', data: 'x', id: undefined },
    ])
  })

  it('decodes a character split between chunks', async () => {
    const bytes = new TextEncoder().encode('data: é\n\n')
    async function* split() {
      yield bytes.slice(0, 7)
      yield bytes.slice(7)
    }
    expect(await all(split())).toEqual([{ event: 'message', data: 'é', id: undefined }])
  })
})
