// The surface of every published package, as API Extractor reports
// (etc/<package>[-<entry>].api.md, checked in): one report per entry of a
// package's `exports`. The `./internal` entries are outside semver but get a
// report too: some public types are built from their lists (the client's
// `DeliveryStatus` from core's `DELIVERY_STATUSES`), so a change there is a
// change of a public type, and the review sees it.
//
//   node scripts/api-report.mjs            check: fails when a surface changed and its
//                                          report was not updated (npm run lint:api)
//   node scripts/api-report.mjs --update   rewrite the reports (npm run api:update)
//   --package <name>   only that package's entries; --reports <dir>   reports elsewhere
//                      than etc/ (the test that shows a stale report failing uses both)
//
// API Extractor reads the built type bundles, so the packages are built first (the
// build skips a package whose inputs have not changed).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const update = args.includes('--update')
const only = option('--package')
const reportFolder = resolve(option('--reports') ?? join(root, 'etc'))
const tempFolder = join(root, 'node_modules', '.cache', 'api-report')

/** The types file an entry of `exports` points a TypeScript ESM importer at. */
function typesOf(target) {
  if (typeof target === 'string') return target.endsWith('.d.ts') ? target : undefined
  if (!target || typeof target !== 'object') return undefined
  for (const key of ['node', 'import', 'types', 'default']) {
    const found = key === 'types' ? typesOf(target.types) : typesOf(target[key])
    if (found) return found
  }
  return undefined
}

/** Every entry of every published package: name, report name, types file. */
function reportedEntries() {
  const workspaces = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces
  return workspaces
    .filter((dir) => dir.startsWith('packages/'))
    .flatMap((dir) => {
      const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'))
      if (manifest.private || (only && manifest.name !== only)) return []
      const short = manifest.name.replace(/^@[^/]+\//, '')
      return Object.entries(manifest.exports ?? {})
        .filter(([entry]) => entry !== './package.json')
        .map(([entry, target]) => {
          const types = typesOf(target)
          if (!types) throw new Error(`${manifest.name} ${entry}: no .d.ts in its exports`)
          return {
            name: entry === '.' ? manifest.name : `${manifest.name}/${entry.slice(2)}`,
            report: entry === '.' ? short : `${short}-${entry.slice(2).replaceAll('/', '-')}`,
            folder: join(root, dir),
            types: join(root, dir, types),
          }
        })
    })
}

function configFor(entry) {
  return {
    projectFolder: entry.folder,
    mainEntryPointFilePath: entry.types,
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022', 'dom'],
          strict: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: [entry.types],
      },
    },
    apiReport: {
      enabled: true,
      reportFolder,
      reportTempFolder: tempFolder,
      reportFileName: entry.report,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: 'lf',
    messages: {
      compilerMessageReporting: { default: { logLevel: 'warning' } },
      extractorMessageReporting: {
        default: { logLevel: 'warning', addToApiReportFile: true },
        // Every name is public: the packages use no release tags.
        'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
        // npm run docs:check already fails on an export without TSDoc.
        'ae-undocumented': { logLevel: 'none', addToApiReportFile: false },
      },
      tsdocMessageReporting: { default: { logLevel: 'none', addToApiReportFile: false } },
    },
  }
}

/** Runs one entry; returns a line describing a failure, or undefined. */
function report(entry) {
  const config = ExtractorConfig.prepare({
    configObject: configFor(entry),
    configObjectFullPath: join(entry.folder, 'api-extractor.json'),
    packageJsonFullPath: join(entry.folder, 'package.json'),
  })
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback(message) {
      // Warnings land in the report itself; only errors are worth a line here.
      if (message.logLevel !== 'error') message.handled = true
    },
  })
  if (result.apiReportChanged && !update) {
    return `${entry.name}: its public surface changed and etc/${entry.report}.api.md does not say so (run npm run api:update and commit the report)`
  }
  if (!result.succeeded && !result.apiReportChanged) {
    return `${entry.name}: API Extractor failed (${result.errorCount} errors)`
  }
  return undefined
}

const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
})
if (built.status !== 0) process.exit(built.status ?? 1)

mkdirSync(reportFolder, { recursive: true })
const entries = reportedEntries()
const failures = entries.map(report).filter(Boolean)
// A report whose entry is gone is a stale promise: it goes too.
const expected = new Set(entries.map((entry) => `${entry.report}.api.md`))
for (const file of readdirSync(reportFolder).filter((f) => f.endsWith('.api.md'))) {
  if (only || expected.has(file)) continue
  if (update) rmSync(join(reportFolder, file))
  else failures.push(`${file}: no package entry reports there any more (run npm run api:update)`)
}
if (existsSync(tempFolder) && update) rmSync(tempFolder, { recursive: true, force: true })

for (const failure of failures) console.error(`api-report: ${failure}`)
if (failures.length > 0) process.exit(1)
console.log(
  update
    ? `api-report: ${entries.length} reports written to etc/`
    : `api-report: ${entries.length} entries match their reports in etc/`,
)
