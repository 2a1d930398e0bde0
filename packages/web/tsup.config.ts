import { packageConfig } from '../../tsup.package.js'

// Bun, Deno, Workers and Edge routes import this: nothing here may assume Node.
export default packageConfig({ platform: 'neutral', target: 'es2022' })
