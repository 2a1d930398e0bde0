import { defineConfig, type Options } from 'tsup'

/**
 * The build every package shares: ESM and CJS with their types, for Node 20 unless
 * a package says otherwise, `node:` imports kept as written, no source maps in the
 * tarball. A package's tsup.config.ts passes only what differs.
 */
export const packageConfig = (overrides: Options = {}) =>
  defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    platform: 'node',
    target: 'node20',
    dts: true,
    clean: true,
    sourcemap: false,
    removeNodeProtocol: false,
    ...overrides,
  })
