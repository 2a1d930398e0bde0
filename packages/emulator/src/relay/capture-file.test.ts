import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  bodyOf,
  CaptureFileError,
  captureOf,
  readCapture,
  resendHeaders,
  writeCapture,
} from './capture-file.js'

const dir = mkdtempSync(join(tmpdir(), 'aw-capture-unit-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const headers = {
  'service-event-id': 'evt_abc',
  'service-delivery-attempt': '3',
  'content-type': 'application/json',
}

describe('capture files', () => {
  it('keep any bytes exactly, and a text copy only for valid UTF-8', async () => {
    const notUtf8 = new Uint8Array([0x7b, 0xff, 0xfe, 0x00, 0x7d, 0x0a])
    const capture = captureOf({ method: 'POST', path: '/hooks?x=1', headers, body: notUtf8 })
    expect(capture.bodyText).toBeUndefined()
    const file = await writeCapture(dir, capture)
    expect(file).toMatch(/-evt_abc-3\.json$/)
    const read = await readCapture(file)
    expect([...bodyOf(read)]).toEqual([...notUtf8])
    expect(read).toMatchObject({ version: 1, method: 'POST', path: '/hooks?x=1', headers })

    const text = captureOf({
      method: 'POST',
      path: '/',
      headers,
      body: new TextEncoder().encode('{"a":"ü"}\n'),
    })
    expect(text.bodyText).toBe('{"a":"ü"}\n')
  })

  it('never overwrite each other, even in the same millisecond', async () => {
    const sub = join(dir, 'same-ms')
    const capture = captureOf({
      method: 'POST',
      path: '/',
      headers,
      body: new Uint8Array([1]),
      receivedAt: new Date(0),
    })
    await Promise.all([
      writeCapture(sub, capture),
      writeCapture(sub, capture),
      writeCapture(sub, capture),
    ])
    expect(readdirSync(sub)).toHaveLength(3)
  })

  it.each([
    ['a missing file', null, /no such file/],
    ['not JSON', '{"version":', /is not JSON/],
    ['another version', '{"version":2}', /not a capture of version 1/],
    ['no body', '{"version":1,"headers":{}}', /missing its headers or bodyBase64/],
    [
      'headers that are not strings',
      '{"version":1,"headers":{"a":1},"bodyBase64":""}',
      /missing its headers/,
    ],
  ])('refuse %s with a CaptureFileError', async (_, content, message) => {
    const file = join(dir, `bad-${Math.random()}.json`)
    if (content !== null) writeFileSync(file, content)
    const error = await readCapture(file).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CaptureFileError)
    expect((error as Error).message).toMatch(message)
  })
})

describe('resendHeaders', () => {
  it("keeps the delivery's own headers and drops the transport's", () => {
    const capture = captureOf({
      method: 'POST',
      path: '/hooks',
      headers: { ...headers, host: 'old:1', 'content-length': '2', connection: 'close' },
      body: new TextEncoder().encode('{}'),
    })
    expect(resendHeaders(capture)).toEqual(headers)
  })
})
