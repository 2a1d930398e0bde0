// `bun serve.mjs` or `deno run serve.mjs`, with CONFIG in the environment:
// serves the app on an ephemeral loopback port and prints {"port": n}.
import { appFetch, bridgedOptions } from './bridged-options.mjs'

const env = globalThis.Deno ? globalThis.Deno.env.toObject() : globalThis.process.env
const config = JSON.parse(env.CONFIG)
const post = (path, body) =>
  fetch(`${config.bridge}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
const fetchHandler = appFetch(config.framework, () => bridgedOptions(config, post))
const announce = (port) => console.log(JSON.stringify({ port }))

if (globalThis.Bun) {
  const server = globalThis.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: fetchHandler })
  announce(server.port)
} else {
  globalThis.Deno.serve(
    { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) },
    fetchHandler,
  )
}
