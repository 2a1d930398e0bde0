import { resolve } from 'node:path'
import type { Plugin } from 'esbuild'
import { defineConfig } from 'tsup'
import { cjsForNode } from '../../tsup.package.js'

const entry = {
  index: 'src/index.ts',
  internal: 'src/internal.ts',
  testing: 'src/testing/index.ts',
}

// The portable build is the same source with the platform module pointed at Web
// Crypto, so neither build carries a runtime switch.
const webPlatform: Plugin = {
  name: 'web-platform',
  setup(build) {
    build.onResolve({ filter: /^\.\/node\.js$/ }, (args) =>
      args.importer.endsWith(`platform${'/'}index.ts`)
        ? { path: resolve(args.resolveDir, 'web.ts') }
        : undefined,
    )
  },
}

export default defineConfig([
  {
    entry,
    outDir: 'dist/node',
    format: ['esm', 'cjs'],
    platform: 'node',
    target: 'node22',
    dts: true,
    clean: true,
    sourcemap: false,
    removeNodeProtocol: false,
  },
  {
    entry,
    outDir: 'dist/web',
    format: ['esm', 'cjs'],
    platform: 'neutral',
    target: 'es2022',
    clean: true,
    sourcemap: false,
    removeNodeProtocol: false,
    esbuildPlugins: [webPlatform],
    esbuildOptions: cjsForNode,
  },
])
