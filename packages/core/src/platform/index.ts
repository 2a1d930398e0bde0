// The default (web) build swaps this import for ./web.js; see tsup.config.ts.
export { platform } from './node.js'
