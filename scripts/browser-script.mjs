// Browser code shipped inside a package as text: an import of `<file>.ts?script`
// is the file bundled for the browser (esbuild: one classic script, an IIFE) and
// handed over as a string, the module's default export. tsup (the package's build)
// and vitest (the tests, which run the sources) both use it, so the console the
// tests drive is the script the package ships.
import { dirname, join } from 'node:path'
import { build } from 'esbuild'

const QUERY = /\?script$/

/** The file at `path` and what it imports, bundled as one browser script. */
export async function bundleBrowserScript(path) {
  const result = await build({
    entryPoints: [path],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    charset: 'utf8',
    legalComments: 'none',
    logLevel: 'silent',
    // The entry's own tsconfig (DOM types, no Node types) sits beside it.
    tsconfig: join(dirname(path), 'tsconfig.json'),
  })
  return result.outputFiles[0].text
}

const moduleText = (text) => `export default ${JSON.stringify(text)}\n`

/** For tsup's `esbuildPlugins`. */
export const browserScriptEsbuild = () => ({
  name: 'browser-script',
  setup(esbuild) {
    esbuild.onResolve({ filter: QUERY }, (args) => ({
      path: new URL(args.path.replace(QUERY, ''), `file://${args.resolveDir}/`).pathname,
      namespace: 'browser-script',
    }))
    esbuild.onLoad({ filter: /.*/, namespace: 'browser-script' }, async (args) => ({
      contents: moduleText(await bundleBrowserScript(args.path)),
      loader: 'js',
    }))
  },
})

/** For vitest's `plugins`. */
export const browserScriptVite = () => ({
  name: 'browser-script',
  enforce: 'pre',
  async load(id) {
    if (!QUERY.test(id)) return null
    return moduleText(await bundleBrowserScript(id.replace(QUERY, '')))
  },
})
