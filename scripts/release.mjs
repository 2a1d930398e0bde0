// `npm run release`: a dry run of publishing. Shows what the pending changesets
// would do, then runs `npm publish --dry-run` in every package, so a release
// problem (a missing file, a wrong name, a private flag) shows here first.
// Publishing for real is `npx changeset publish`, from CI with a token.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const root = JSON.parse(readFileSync('package.json', 'utf8'))
const sh = (command, args, cwd = '.') =>
  execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] })

sh('npx', ['changeset', 'status', '--verbose'])
for (const dir of root.workspaces.filter((w) => w.startsWith('packages/'))) {
  const { name, version } = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'))
  process.stdout.write(`\n${name}@${version}\n`)
  sh('npm', ['publish', '--dry-run', '--access', 'public', '--silent'], dir)
}
