import { cjsForNode, packageConfig } from '../../tsup.package.js'

export default packageConfig({
  // The dialect's store package is imported when the store first runs. In the
  // CommonJS build that import is a require, so a CommonJS app loads the store's
  // CommonJS flavour with the same @affiliate-webhooks/core as the rest.
  esbuildOptions(options, context) {
    cjsForNode(options, context)
    if (context.format === 'cjs')
      options.supported = { ...options.supported, 'dynamic-import': false }
  },
})
