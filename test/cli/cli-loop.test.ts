import { afterEach, describe, expect, it } from 'vitest'
import { CLI, killLive, live, startLoop } from '../support/cli-live.js'
import { type Receiver, startPublisher, WHOLE_SCHEDULE_MS } from '../support/emulator-harness.js'
import { run } from '../support/run-process.js'

const BIN = CLI
const receivers: Receiver[] = []
afterEach(async () => {
  killLive()
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

async function endpointFor(cli: (...args: string[]) => ReturnType<typeof run>, url: string) {
  const made = await cli('endpoints', 'create', '--url', url, '--show-secret')
  expect(made.code, made.stderr).toBe(0)
  const id = /^id\s+(\S+)$/m.exec(made.stdout)?.[1] as string
  const secret = /^export AFFILIATE_WEBHOOK_SECRET=(whsec_\S+)$/m.exec(made.stdout)?.[1] as string
  expect(secret).toMatch(/^whsec_/)
  return { id, secret }
}

describe('the banner and trigger', () => {
  it('the banner prints the two exports; trigger emits created and updated, and an update keeps the amounts', async () => {
    const { emulator, env, cli } = await startLoop()
    expect(env.AFFILIATE_API_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(env.AFFILIATE_API_KEY).toMatch(/^la_[A-Za-z0-9]{32}$/)
    const shop = await startPublisher(receivers)
    const { id, secret } = await endpointFor(cli, shop.url)
    shop.useSecret(secret)

    const created = await cli(
      'trigger',
      'conversion.created',
      '--conversion-id',
      '501',
      '--commission',
      '4.20',
      '--sale-amount',
      '60.00',
      '--currency',
      'EUR',
      '--program-id',
      '41',
      '--wait',
    )
    expect(created.code, created.stderr).toBe(0)
    const eventId =
      /^conversion\.created (evt_\w+) \(conversion 501\): delivery \S+ to (\S+)$/m.exec(
        created.stdout,
      )
    expect(eventId?.[2]).toBe(id)
    expect(created.stdout).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d  ${eventId?.[1]}  conversion\\.created  attempt 1  200 processed \\(succeeded\\)  \\d+ ms$`,
        'm',
      ),
    )

    const updated = await cli(
      'trigger',
      'conversion.updated',
      '--conversion-id',
      '501',
      '--status',
      'approved',
      '--wait',
    )
    expect(updated.code, updated.stderr).toBe(0)
    expect(updated.stdout).toMatch(/^conversion\.updated evt_\w+ \(conversion 501\)/m)
    expect(shop.conversions).toEqual([
      expect.objectContaining({
        id: 501,
        status: 'pending',
        commission: '4.20',
        saleAmount: '60.00',
        currency: 'EUR',
        programId: 41,
      }),
      expect.objectContaining({
        id: 501,
        status: 'approved',
        commission: '4.20',
        saleAmount: '60.00',
        currency: 'EUR',
        programId: 41,
      }),
    ])

    // The same status again is no event, said so, exit 1.
    const same = await cli(
      'trigger',
      'conversion.updated',
      '--conversion-id',
      '501',
      '--status',
      'approved',
    )
    expect(same.code).toBe(1)
    expect(same.stdout).toBe('conversion 501 already has status approved: no event\n')

    const json = await cli('trigger', 'conversion.created', '--json')
    expect(json.code, json.stderr).toBe(0)
    const emitted = JSON.parse(json.stdout)
    expect(emitted).toMatchObject({
      event: { type: 'conversion.created' },
      deliveries: [{ webhookId: id }],
    })
    expect(Number.isInteger(emitted.conversionId)).toBe(true)

    // --wait --json: each attempt line carries the receiver's answer, status and outcome.
    const waited = await cli(
      'trigger',
      'conversion.created',
      '--wait',
      '--json',
      '--timeout',
      '30s',
    )
    expect(waited.code, waited.stderr).toBe(0)
    const [, attemptLine] = waited.stdout.trim().split('\n')
    expect(JSON.parse(attemptLine as string)).toMatchObject({
      type: 'attempt',
      status: 'succeeded',
      responseStatus: 200,
      outcome: 'processed',
      errorCode: null,
    })

    // The emulator checks the values: exit 3, each field named.
    const refused = await cli(
      'trigger',
      'conversion.created',
      '--commission',
      '4,20',
      '--currency',
      'euro',
      '--status',
      'paid',
    )
    expect(refused.code).toBe(3)
    expect(refused.stderr).toMatch(
      /400 validation failed: status invalid_format \(status must be one of .+\), commission invalid_format \(.+\), currency invalid_format \(.+\)/,
    )

    // The emulator's own terminal shows every attempt.
    await emulator.waitFor(/attempt 1\/8 {2}200 ok/)
    expect(emulator.stdout()).not.toContain(secret)
  })

  it.each([
    [['trigger'], /missing event type/],
    [
      ['trigger', 'conversion.deleted'],
      /event type must be conversion\.created or conversion\.updated/,
    ],
    [['trigger', 'conversion.updated', '--status', 'approved'], /needs --conversion-id/],
    [['trigger', 'conversion.updated', '--conversion-id', '1'], /pass --status/],
  ])('trigger %j: one line, exit 2', async (args, message) => {
    const result = await run(process.execPath, [BIN, ...args], {
      env: { AFFILIATE_API_URL: 'http://127.0.0.1:9', AFFILIATE_API_KEY: `la_${'k'.repeat(32)}` },
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
  })
})

describe('deliveries --follow', () => {
  it("shows each attempt with the receiver's error code, the disable, the re-enable after recover, and the replays", async () => {
    const { emulator, env, cli } = await startLoop()
    const shop = await startPublisher(receivers)
    const { id, secret } = await endpointFor(cli, shop.url)
    shop.useSecret(secret)
    shop.state.broken = true

    const follow = live(['deliveries', id, '--follow'], env)
    const followJson = live(['deliveries', id, '--follow', '--json'], env)
    // Both listen before anything happens: on the emulator the first line comes once
    // its event stream is open.
    for (const follower of [follow, followJson]) {
      const deadline = Date.now() + 30_000
      while (!follower.stderr().includes(`following ${id} live:`)) {
        if (Date.now() > deadline) throw new Error(`not listening:\n${follower.stderr()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    // 20 failed attempts in a row disable the endpoint. The clock runs while the
    // conversions are made: on a slow machine the first deliveries' retries count in
    // the 20 and the last conversions occur while it is disabled, which queues nothing.
    // So the deliveries are those the emulator says it queued, however many.
    const authorization = `Bearer ${env.AFFILIATE_API_KEY}`
    const queued: string[] = []
    for (let n = 0; n < 20; n++) {
      const made = await fetch(`${env.AFFILIATE_API_URL}/emulator/conversions`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 900 + n, status: 'pending' }),
      })
      expect(made.status).toBe(200)
      const { data } = (await made.json()) as { data: { deliveries: { id: string }[] } }
      queued.push(...data.deliveries.map((delivery) => delivery.id))
    }
    expect(queued.length).toBeGreaterThan(0)
    await follow.waitFor(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d  ${id} disabled: deliveries stopped$`, 'm'),
      30_000,
    )
    expect(follow.stdout()).toMatch(
      /^\d\d:\d\d:\d\d {2}evt_\w+ {2}conversion\.created {2}attempt \d {2}500 handler_failed \((retrying|failed)\) {2}\d+ ms$/m,
    )
    // The emulator's terminal: the receiver's code on each failed attempt, and the disable.
    await emulator.waitFor(
      new RegExp(`${id}  disabled: 20 failed attempts in a row; "recover ${id}"`),
    )
    expect(emulator.stdout()).toMatch(/attempt 1\/8 {2}500 failed handler_failed {2}\d+ ms/)
    // Disabled, the endpoint's retries are marked failed as they come due. Past the
    // whole schedule, every one has: the emulator answers once the last due attempt ran.
    const advanced = await fetch(`${env.AFFILIATE_API_URL}/emulator/clock`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ advanceMs: WHOLE_SCHEDULE_MS }),
    })
    expect(advanced.status).toBe(200)
    const listed = await fetch(
      `${env.AFFILIATE_API_URL}/v1/webhooks/${id}/deliveries?status=failed&size=100`,
      { headers: { authorization } },
    )
    expect(listed.status).toBe(200)
    const failed = ((await listed.json()) as { data: { id: string }[] }).data
    expect(failed.map((delivery) => delivery.id).sort()).toEqual([...queued].sort())

    shop.state.broken = false
    const recovered = await cli('recover', id)
    expect(recovered.code, recovered.stderr).toBe(0)
    await follow.waitFor(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  ${id} is active again$`, 'm'), 30_000)
    await follow.waitFor(
      /^\d\d:\d\d:\d\d {2}evt_\w+ {2}conversion\.created {2}attempt 1 {2}200 processed \(succeeded\)/m,
      30_000,
    )

    await followJson.waitFor(/"status":"active"/, 30_000)
    const objects = followJson
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(objects).toContainEqual(
      expect.objectContaining({ type: 'endpoint', endpointId: id, status: 'disabled' }),
    )
    expect(objects).toContainEqual(
      expect.objectContaining({
        type: 'attempt',
        responseStatus: 500,
        errorCode: 'handler_failed',
      }),
    )
    expect(await follow.stop()).toBe(0)
    expect(await followJson.stop()).toBe(0)
    expect(follow.stdout() + followJson.stdout()).not.toContain(secret)
  }, 90_000)

  it('--follow with a filter: one line, exit 2', async () => {
    const result = await run(
      process.execPath,
      [BIN, 'deliveries', 'wh_1', '--follow', '--status', 'failed'],
      {
        env: { AFFILIATE_API_URL: 'http://127.0.0.1:9', AFFILIATE_API_KEY: `la_${'k'.repeat(32)}` },
      },
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(
      /--follow shows every new attempt: it takes no --status or --since/,
    )
  })

  it('an endpoint that does not exist: one line, exit 3', async () => {
    const { cli } = await startLoop()
    const result = await cli('deliveries', 'wh_nope', '--follow')
    expect(result.code).toBe(3)
    expect(result.stderr).toMatch(/404 webhook_not_found/)
  })
})
