// `npm run registry [-- --port N]`: a local npm registry with every package of this
// checkout, published through the release path (`npm run release`, without the
// version step and the package checks, which CI runs), serving until Ctrl-C. Apps
// point only the @affiliate-webhooks scope at it; everything else still comes from
// the registry npm is configured for. Its storage is temporary: gone when it stops.
import { DEFAULT_PORT, releaseTo, SCOPE, startRegistry } from './local-registry.mjs'

const fail = (line, code = 1) => {
  process.stderr.write(`registry: ${line}\n`)
  process.exit(code)
}

function parsePort(argv) {
  if (argv.length === 0) return DEFAULT_PORT
  const [flag, inline] = argv[0].split(/=(.*)/s, 2)
  const value = inline ?? argv[1]
  if (flag !== '--port' || argv.length > (inline === undefined ? 2 : 1)) {
    fail(`unknown option ${argv.join(' ')} (the one option is --port N)`, 2)
  }
  const port = Number(value)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    fail(`--port needs a port number from 1 to 65535, got ${value ?? 'nothing'}`, 2)
  }
  return port
}

const started = performance.now()
const port = parsePort(process.argv.slice(2))
// What it is doing, as it does it: on a fresh clone the build alone takes minutes.
// (No line of progress starts with `registry: `: that is how a failure begins.)
const say = (line) => process.stdout.write(`${line}\n`)
say(`starting a local registry (Verdaccio) on 127.0.0.1:${port}`)
let registry
try {
  registry = await startRegistry({ port })
} catch (error) {
  fail(error.message)
}
let stopping = false
const stop = async () => {
  stopping = true
  await registry.stop()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)

say(
  `Verdaccio answers on ${registry.url}; now the release path: build every package (a few minutes on a fresh clone), pack, publish`,
)
try {
  // The release's own lines (its steps, the build's) as they come.
  await releaseTo(registry, ['--no-version', '--no-checks'], {
    onOutput: (chunk) => process.stdout.write(chunk),
  })
} catch {
  await registry.stop()
  fail('publishing to the local registry failed (above); is the checkout built? npm run build')
}

const seconds = ((performance.now() - started) / 1000).toFixed(1)
process.stdout.write(
  `registry ready: ${registry.url} (${seconds} s)\n` +
    `Point an app at it for the ${SCOPE} scope only (everything else still comes from your registry); in the app's folder:\n` +
    `  npm config set ${SCOPE}:registry ${registry.url} --location project\n` +
    `(it writes the app's .npmrc, not your user config), or add this line to the app's .npmrc yourself:\n` +
    `  ${registry.scopeLine}\n` +
    'Serving until Ctrl-C; what was published is gone when it stops.\n',
)
registry.child.on('exit', (code) => {
  if (!stopping) fail(`Verdaccio stopped on its own (exit ${code})`)
})
