import { defineConfig, type Options } from 'tsup'

/**
 * esbuild writes the `0 && (module.exports = { a, b })` hint that lets Node's
 * `import()` of a CommonJS file see its named exports only for the `node`
 * platform. A CommonJS file is only ever loaded by `require`, so its build is
 * always the node flavour, even for a package whose ESM build is portable.
 */
export const cjsForNode: NonNullable<Options['esbuildOptions']> = (options, { format }) => {
  if (format === 'cjs') options.platform = 'node'
}

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
    target: 'node22',
    dts: true,
    clean: true,
    sourcemap: false,
    removeNodeProtocol: false,
    esbuildOptions: cjsForNode,
    ...overrides,
  })
