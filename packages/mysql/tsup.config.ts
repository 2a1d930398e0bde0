import { packageConfig } from '../../tsup.package.js'

// index: the public entry; internal: the layout and statements for sibling packages (outside semver).
export default packageConfig({ entry: ['src/index.ts', 'src/internal.ts'] })
