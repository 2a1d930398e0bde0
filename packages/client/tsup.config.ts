import { packageConfig } from '../../tsup.package.js'

// Built on fetch alone: the same file runs on Node, Bun, Deno and Workers.
export default packageConfig({ platform: 'neutral', target: 'es2022' })
