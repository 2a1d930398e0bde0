#!/usr/bin/env node
// The file npm links as `affiliate-webhooks`. It exists before anything is built,
// so on a fresh clone `npm ci` links it (npm skips a bin whose file is missing)
// and no install script is needed: installs from a tarball run none.
import('../dist/cli.js').catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/cli.js'))
    throw error
  process.stderr.write('affiliate-webhooks: the CLI is not built yet; run `npm run build` first\n')
  process.exitCode = 1
})
