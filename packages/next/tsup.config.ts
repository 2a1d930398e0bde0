import { packageConfig } from '../../tsup.package.js'

// Edge routes import this too: nothing here may assume Node.
export default packageConfig({ platform: 'neutral', target: 'es2022' })
