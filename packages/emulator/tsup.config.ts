import { browserScriptEsbuild } from '../../scripts/browser-script.mjs'
import { packageConfig } from '../../tsup.package.js'

// The console's browser code (src/console/browser, TypeScript under its own tsconfig)
// is bundled for the browser and shipped as the text the console serves.
export default packageConfig({
  entry: { index: 'src/index.ts', internal: 'src/internal.ts' },
  esbuildPlugins: [browserScriptEsbuild()],
})
