// Every relative link in the repository's Markdown must reach a file or folder
// that exists, and a `#fragment` into a Markdown file must name one of its
// headings (GitHub's anchors) or an explicit `<a id>`/`<a name>`.
//   node scripts/check-links.mjs        print each broken link, exit 1 if any
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The Markdown a reader of the repository opens, relative to `root`, sorted. */
export function markdownFiles(root) {
  const files = ['README.md']
  const walk = (dir) => {
    if (!existsSync(join(root, dir))) return
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name)
      if (statSync(join(root, path)).isDirectory()) walk(path)
      else if (name.endsWith('.md')) files.push(path)
    }
  }
  walk('docs')
  walk('bench')
  for (const parent of ['packages', 'examples', 'test']) {
    if (!existsSync(join(root, parent))) continue
    for (const name of readdirSync(join(root, parent)).sort()) {
      const readme = join(parent, name, 'README.md')
      if (existsSync(join(root, readme))) files.push(readme)
    }
  }
  if (existsSync(join(root, 'test/README.md'))) files.push('test/README.md')
  return files.filter((file) => existsSync(join(root, file)))
}

/** The text without fenced code blocks (and inline code spans unless `keepInline`), lines kept in place. */
function withoutCode(text, keepInline = false) {
  const lines = text.split('\n')
  let fence = null
  return lines
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
      if (fence) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null
        return ''
      }
      if (marker) {
        fence = marker
        return ''
      }
      return keepInline ? line : line.replace(/(`+)[^`]*?\1/g, '')
    })
    .join('\n')
}

/** Link targets with their line numbers: inline links, images, references, href/src. */
export function linkTargets(text) {
  const targets = []
  const lines = withoutCode(text).split('\n')
  lines.forEach((line, index) => {
    const patterns = [
      /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
      /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g,
      /\b(?:href|src)="([^"]+)"/g,
    ]
    for (const pattern of patterns) {
      for (const match of line.matchAll(pattern))
        targets.push({ target: match[1], line: index + 1 })
    }
  })
  return targets
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  return heading
    .replace(/<[^>]+>/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a Markdown text offers: its headings (deduplicated as GitHub does) and `<a id>`s. */
export function anchors(text) {
  const found = new Set()
  const seen = new Map()
  for (const line of withoutCode(text, true).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading !== undefined) {
      const base = slug(heading)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1])
  }
  return found
}

/** `file:line: target (why)` for each relative link in `files` that does not resolve. */
export function brokenLinks(root, files) {
  const anchorCache = new Map()
  const anchorsOf = (path) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')))
    return anchorCache.get(path)
  }
  const broken = []
  for (const file of files) {
    const path = join(root, file)
    for (const { target, line } of linkTargets(readFileSync(path, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue
      const [rawPath, fragment] = target.split('#', 2)
      const targetPath = rawPath
        ? join(dirname(path), decodeURIComponent(rawPath.split('?')[0]))
        : path
      const where = `${file}:${line}: ${target}`
      if (!existsSync(targetPath)) {
        broken.push(`${where} (no such file: ${relative(root, targetPath)})`)
        continue
      }
      if (fragment && targetPath.endsWith('.md') && !anchorsOf(targetPath).has(fragment)) {
        broken.push(
          `${where} (no heading or anchor "${fragment}" in ${relative(root, targetPath)})`,
        )
      }
    }
  }
  return broken
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const broken = brokenLinks(root, markdownFiles(root))
  for (const line of broken) console.error(`broken link: ${line}`)
  if (broken.length > 0) process.exit(1)
  console.log('every relative link resolves')
}
