/**
 * The raw client of the hostile-input suite tells a server that closed after its
 * answer from one that left the connection open, including when the client is
 * still writing and its next write fails (the once-flaky `signed trickle x50`:
 * the write's EPIPE arrived before the FIN's 'end' and was read as "left open").
 */
import { once } from 'node:events'
import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { rawRequest } from '../support/hostile-cases.js'

const ANSWER = 'HTTP/1.1 408 Request Timeout\r\ncontent-length: 2\r\n\r\n{}'
const HEAD = 'POST /hooks HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1000\r\n\r\n'
const trickle = Array.from({ length: 40 }, () => [
  { write: new Uint8Array(5) },
  { wait: 25 },
]).flat()

let server: Server | undefined
afterEach(() => server?.close())

/** A server that answers the first bytes it reads, then does `then` to the socket. */
async function serve(then: (socket: Socket) => void): Promise<string> {
  server = createServer((socket) => {
    socket.on('error', () => {})
    socket.once('data', () => socket.write(ANSWER, () => then(socket)))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address() as { port: number }
  return `http://127.0.0.1:${address.port}/hooks`
}

describe('rawRequest: closed after the answer, or left open', () => {
  it('an answer then a FIN is closed', async () => {
    const url = await serve((socket) => socket.end())
    const got = await rawRequest(url, HEAD, trickle, 5_000)
    expect(got).toMatchObject({ status: 408, closed: true })
  })

  it('an answer then a reset while the client still writes is closed', async () => {
    const url = await serve((socket) => socket.resetAndDestroy())
    const got = await rawRequest(url, HEAD, trickle, 5_000)
    expect(got).toMatchObject({ status: 408, closed: true })
  })

  it('an answer and an open connection is not closed', async () => {
    const url = await serve(() => {})
    const got = await rawRequest(url, HEAD, trickle, 5_000)
    expect(got).toMatchObject({ status: 408, closed: false })
  })

  it('a reset before any answer is no answer', async () => {
    server = createServer((socket) => socket.resetAndDestroy())
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as { port: number }
    const got = await rawRequest(`http://127.0.0.1:${port}/hooks`, HEAD, trickle, 5_000)
    expect(got).toMatchObject({ status: 'none', closed: false })
  })
})
