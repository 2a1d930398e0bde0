export const PUBLIC_REGISTRY: string
export const PUBLISH_PARALLEL: number

export interface ReleaseOptions {
  registry: string
  tag: string
  out: string | undefined
  dryRun: boolean
  version: boolean
  build: boolean
  checks: boolean
  skipPublished: boolean
}
export interface ReleasePackage {
  name: string
  version: string
  dir: string
  manifest: Record<string, unknown>
}
/** The options, or one line naming the mistake. */
export function parseReleaseArgs(
  argv: string[],
): { options: ReleaseOptions; error?: undefined } | { error: string; options?: undefined }
export function normalizeRegistry(url: string): string | undefined
export function showRegistry(registry: string): string
export function readPackages(root: string): ReleasePackage[]
/** Publishing waves: each wave needs only packages of earlier waves. */
export function publishWaves(packages: ReleasePackage[]): string[][]
export function pendingChangesets(root: string): string[]
export function finishCommand(options: ReleaseOptions): string
export function nameList(names: string[], shown?: number): string
