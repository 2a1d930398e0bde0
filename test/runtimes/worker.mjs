// A Cloudflare Worker (module syntax), bundled by the test and run by workerd
// through Miniflare. CONFIG is a text binding; BRIDGE a service binding to the
// test process.
import { appFetch, bridgedOptions } from './bridged-options.mjs'

let fetchHandler
export default {
  async fetch(request, env, ctx) {
    fetchHandler ??= appFetch(env.FRAMEWORK, (workerEnv) => {
      const post = (path, body) =>
        workerEnv.BRIDGE.fetch(`http://bridge${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      return bridgedOptions(JSON.parse(workerEnv.CONFIG), post)
    })
    return fetchHandler(request, env, ctx)
  },
}
