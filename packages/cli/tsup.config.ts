import { readFileSync, rmSync } from 'node:fs'
import { packageConfig } from '../../tsup.package.js'

// index: the library (delivery simulator, verify diagnosis); cli: the binary, whose
// shebang tsup keeps and whose file it makes executable. One config, so one clean.
// The binary is ESM only (bin/affiliate-webhooks.js imports dist/cli.js): its
// CommonJS twin would ship unused, so it is removed. Each command's code is its own
// chunk, imported when the command runs.
const { version } = JSON.parse(readFileSync('package.json', 'utf8'))

export default packageConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli.ts' },
  // src/version.ts: the manifest's version, written in at build time.
  define: { __AW_CLI_VERSION__: JSON.stringify(version) },
  dts: { entry: { index: 'src/index.ts' } },
  onSuccess: async () => rmSync('dist/cli.cjs', { force: true }),
})
