#!/usr/bin/env node
import { main } from './main.js'

// A reader that went away (`... | head`): stop quietly, as a pipeline expects,
// instead of dying on an unhandled EPIPE. Any other write error stays fatal.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0)
    throw error
  })
}

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  onInterrupt(listener) {
    // The first Ctrl-C stops the run and prints the summary; a second one does not wait.
    let count = 0
    const onSigint = () => {
      count++
      if (count > 1) process.exit(130)
      listener()
    }
    process.on('SIGINT', onSigint)
    return () => process.off('SIGINT', onSigint)
  },
}).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(
      `affiliate-webhooks: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    process.exitCode = 70
  },
)
