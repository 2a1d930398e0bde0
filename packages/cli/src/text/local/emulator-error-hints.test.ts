import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { errorHint } from './emulator-error-hints.js'
import { routeHint } from './emulator-route-hint.js'

describe('errorHint', () => {
  it('gives the hint for the side that failed, the first matching cause winning', () => {
    expect(errorHint('app', 'connect ECONNREFUSED 127.0.0.1:3000')).toMatch(/is your app running/)
    expect(errorHint('service', 'connect ECONNREFUSED 127.0.0.1:4010')).toMatch(
      /start the emulator/,
    )
    expect(errorHint('service', 'POST /emulator/conversions: 404 route_not_found')).toMatch(
      /not the emulator/,
    )
    expect(errorHint('app', 'EADDRINUSE')).toMatch(/--port/)
    expect(errorHint('app', 'no answer within 10000 ms')).toMatch(/answered too slowly/)
    expect(errorHint('service', '<!DOCTYPE html><html>')).toMatch(/AFFILIATE_API_URL/)
  })

  it("names the fix of the stack whose webhook answered raw_body_unavailable, not Express's", () => {
    const h3 =
      '500 {"error":{"code":"raw_body_unavailable","adapter":"h3","message":"The body was read..."}}'
    expect(errorHint('app', h3)).toMatch(/readBody\(event\)/)
    const web =
      '{"error":{"code":"raw_body_unavailable","adapter":"web","message":"The body was read..."}}'
    expect(errorHint('app', web)).toMatch(/context\.request\.clone\(\)/)
    expect(errorHint('app', '{"error":{"code":"raw_body_unavailable","message":"x"}}')).toMatch(
      /read the body before the webhook/,
    )
  })

  it('gives none when no usual cause fits', () => {
    expect(errorHint('app', '500 handler_failed')).toBeUndefined()
  })
})

describe('routeHint', () => {
  it('a 405: the method is wrong, on the path given', async () => {
    expect(await routeHint('http://127.0.0.1:1/hooks', 405)).toMatch(
      /routes \/hooks but not POST there/,
    )
  })

  it('a 404: the path its webhook answers at, when the probe finds one, else the wrong path', async () => {
    // Answers like this library's receivers: 400 missing_signature at /webhooks only.
    const server = createServer((request, response) => {
      const found = request.url === '/webhooks'
      response.writeHead(found ? 400 : 404, { 'content-type': 'application/json' })
      response.end(found ? '{"error":{"code":"missing_signature"}}' : '{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      expect(await routeHint(`${base}/hook`, 404)).toBe(
        `the app has no route at /hook; its webhook answers at ${base}/webhooks`,
      )
      server.removeAllListeners('request')
      server.on('request', (_request, response) => response.writeHead(404).end())
      expect(await routeHint(`${base}/hook`, 404)).toMatch(/has no POST route at \/hook/)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
