import { packageConfig } from '../../tsup.package.js'

export default packageConfig({ entry: { index: 'src/index.ts', internal: 'src/internal.ts' } })
