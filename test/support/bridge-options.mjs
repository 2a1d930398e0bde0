// Runs inside the app under test (Bun, Deno, workerd, a framework's built server).
// The receiver, its store and the adapter run there; only the publisher's handler
// and the log lines cross to the test process, over loopback HTTP (see
// test/runtimes/runtime-bridge.ts). No imports: it is copied into built apps.

/**
 * The receiver options a conformance case asked for, with `onConversion` and the
 * logger forwarded to the test process through `post(path, body)`.
 * @param {{ secret: string, maxBodyBytes?: number, logger: boolean }} config
 * @param {(path: string, body: unknown) => Promise<Response>} post
 */
export function bridgedOptions(config, post) {
  // Lines are kept and sent together when the answer is ready (see appFetch).
  const lines = []
  const log = (level) => (line) => {
    lines.push({ level, line })
  }
  const options = {
    secret: config.secret,
    logger: config.logger ? { warn: log('warn'), error: log('error') } : false,
    onConversion: async (conversion, event) => {
      const answer = await post('/conversion', { conversion, event })
      if (!answer.ok) throw new Error(await answer.text())
    },
  }
  if (config.maxBodyBytes !== undefined) options.maxBodyBytes = config.maxBodyBytes
  return {
    options,
    /** Sends the lines logged so far, so they arrive before the answer does. */
    flush: async () => {
      if (lines.length > 0) await post('/log', lines.splice(0))
    },
  }
}

/**
 * The receiver of the current case in a built app: `readConfig()` gives the case's
 * config as text (the file BRIDGE_CONFIG_FILE names), and a new receiver is made by
 * `makeHandler(options)` whenever that text changes, so one server serves every case.
 * @template H
 * @param {() => string} readConfig
 * @param {(options: object) => H} makeHandler
 * @returns {() => { handler: H, flush: () => Promise<void> }}
 */
export function receiverPerCase(readConfig, makeHandler) {
  let made
  return () => {
    const text = readConfig()
    if (made?.text !== text) {
      const config = JSON.parse(text)
      const post = (path, body) =>
        fetch(`${config.bridge}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      const bridged = bridgedOptions(config, post)
      made = { text, handler: makeHandler(bridged.options), flush: bridged.flush }
    }
    return made
  }
}
