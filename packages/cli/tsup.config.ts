import { defineConfig } from 'tsup'

export default defineConfig({
  // index: the library (delivery simulator, verify diagnosis); cli: the binary, whose
  // shebang tsup keeps and whose file it makes executable. One config, so one clean.
  entry: { index: 'src/index.ts', cli: 'src/cli.ts' },
  format: ['esm', 'cjs'],
  platform: 'node',
  target: 'node20',
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: false,
  removeNodeProtocol: false,
})
