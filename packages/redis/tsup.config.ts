import { packageConfig } from '../../tsup.package.js'

// index: the public entry; internal: what only sibling packages share (outside semver).
export default packageConfig({ entry: ['src/index.ts', 'src/internal.ts'] })
