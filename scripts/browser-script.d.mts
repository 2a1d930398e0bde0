import type { Plugin as EsbuildPlugin } from 'esbuild'

/** The file at `path` and what it imports, bundled as one browser script (an IIFE). */
export function bundleBrowserScript(path: string): Promise<string>
/** For tsup's `esbuildPlugins`: `<file>.ts?script` becomes the bundled text. */
export function browserScriptEsbuild(): EsbuildPlugin
/** For vitest's `plugins`: `<file>.ts?script` becomes the bundled text. */
export function browserScriptVite(): {
  name: string
  enforce: 'pre'
  load(id: string): Promise<string | null>
}
