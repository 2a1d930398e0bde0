/**
 * The local loop tells the whole story: trigger --wait follows each delivery to
 * its end, naming its endpoint when there are several, while `emulator clock`
 * moves time; recover says what is still retrying.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { killLive, live, startLoop } from '../support/cli-live.js'
import { type Receiver, startPublisher, startReceiver } from '../support/emulator-harness.js'

const receivers: Receiver[] = []
afterEach(async () => {
  killLive()
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

describe('trigger --wait and emulator clock', () => {
  it('two endpoints: every line names its endpoint; one succeeds, the other is followed through all eight attempts once the clock moves', async () => {
    const { env, cli } = await startLoop()
    const shop = await startPublisher(receivers)
    const broken = await startReceiver((_req, res) =>
      res.writeHead(500).end('{"error":{"code":"boom"}}'),
    )
    receivers.push(broken)
    const good = await cli('endpoints', 'create', '--url', shop.url, '--show-secret')
    const goodId = /^id\s+(\S+)$/m.exec(good.stdout)?.[1] as string
    shop.useSecret(/^export AFFILIATE_WEBHOOK_SECRET=(\S+)$/m.exec(good.stdout)?.[1] as string)
    const bad = await cli('endpoints', 'create', '--url', broken.url, '--show-secret')
    const badId = /^id\s+(\S+)$/m.exec(bad.stdout)?.[1] as string

    const waiting = live(['trigger', 'conversion.created', '--wait', '--timeout', '60s'], env)
    await waiting.waitFor(
      new RegExp(
        `  ${goodId}  evt_\\w+  conversion\\.created  attempt 1  200 processed \\(succeeded\\)`,
      ),
      30_000,
    )
    await waiting.waitFor(
      new RegExp(
        `  ${badId}  evt_\\w+  conversion\\.created  attempt \\d  500 boom \\(retrying\\)  \\d+ ms  next attempt \\d in \\d+ min of service time$`,
        'm',
      ),
      30_000,
    )

    // The whole retry schedule, moved by the CLI with the management commands' key.
    const moved = await cli('emulator', 'clock', '+2d')
    expect(moved.code, moved.stderr).toBe(0)
    expect(moved.stdout).toMatch(
      /^clock moved forward 2d, to \d{4}-\d\d-\d\dT\S+ \(the emulator's clock\); \d+ attempts? made$/m,
    )
    await waiting.waitFor(
      new RegExp(`  ${badId}  evt_\\w+  conversion\\.created  attempt 8  500 boom \\(failed\\)`),
      30_000,
    )
    // It may have exited already, before a listener could be added.
    const code =
      waiting.child.exitCode ??
      (await new Promise((resolve) => waiting.child.once('exit', resolve)))
    expect(code).toBe(1)
    // Every attempt line names its endpoint.
    const lines = waiting
      .stdout()
      .split('\n')
      .filter((line) => line.includes('attempt'))
    expect(lines.every((line) => line.includes(goodId) || line.includes(badId))).toBe(true)
  }, 90_000)

  it('emulator clock: a bad duration is one line and exit 2; against something that is not the emulator, exit 3', async () => {
    const { cli } = await startLoop()
    const wrong = await cli('emulator', 'clock', 'soon')
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toMatch(
      /--duration must be a duration like 90s, 10m, 2h or 3d, not "soon"/,
    )
    const none = await cli('emulator', 'clock', '+1h', '--api-url', 'http://127.0.0.1:9')
    expect(none.code).toBe(4)
  })

  it('recover says how many deliveries are still retrying and when their next attempts are due', async () => {
    const { cli } = await startLoop(['--time-scale', '1'])
    const broken = await startReceiver((_req, res) => res.writeHead(500).end())
    receivers.push(broken)
    const made = await cli('endpoints', 'create', '--url', broken.url, '--show-secret')
    const id = /^id\s+(\S+)$/m.exec(made.stdout)?.[1] as string
    for (let n = 0; n < 3; n++) expect((await cli('trigger', 'conversion.created')).code).toBe(0)
    expect((await cli('emulator', 'clock', '+1m')).code).toBe(0)
    const recovered = await cli('recover', id)
    expect(recovered.code, recovered.stderr).toBe(0)
    expect(recovered.stdout).toMatch(/^replayed 0 of 0 failed deliveries/m)
    expect(recovered.stdout).toMatch(
      /^3 still retrying: not replayed \(the service refuses a delivery it still retries\); it tries them again itself, next attempts? due (from \S+Z to )?\d{4}-\d\d-\d\dT\S+Z \(the service's clock\)\./m,
    )
  })
})
