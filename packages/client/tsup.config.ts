import { packageConfig } from '../../tsup.package.js'

// Built on fetch alone: the same file runs on Node, Bun, Deno and Workers.
// index: the public entry; internal: what only sibling packages share (outside semver).
export default packageConfig({
  entry: ['src/index.ts', 'src/internal.ts'],
  platform: 'neutral',
  target: 'es2022',
})
