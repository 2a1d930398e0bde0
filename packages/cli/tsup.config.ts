import { packageConfig } from '../../tsup.package.js'

// index: the library (delivery simulator, verify diagnosis); cli: the binary, whose
// shebang tsup keeps and whose file it makes executable. One config, so one clean.
export default packageConfig({
  entry: { index: 'src/index.ts', cli: 'src/cli.ts' },
  dts: { entry: { index: 'src/index.ts' } },
})
