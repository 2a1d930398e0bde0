#!/usr/bin/env node
import { main } from './commands/main.js'

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  onInterrupt(listener) {
    process.on('SIGINT', listener)
    return () => process.off('SIGINT', listener)
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
