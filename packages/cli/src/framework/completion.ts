import { BIN, type Command, type CommandSpec } from './command.js'
import { EXIT, UsageError } from './io.js'

/** What a shell needs of one command, read off its declaration so the scripts cannot drift. */
interface Shape {
  name: string
  summary: string
  /** Listed flags: name, first line of help, whether it takes a value, whether that is a file. */
  flags: { name: string; help: string; value: boolean; file: boolean }[]
  /** Words right after the command in its usage lines (`endpoints list|get...`). */
  subs: string[]
  /** Its usage takes an endpoint id. */
  ids: boolean
}

/** A command with its declaration imported. */
type Declared = Pick<Command, 'name' | 'summary'> & CommandSpec

function shapes(commands: readonly Declared[]): Shape[] {
  return commands.map((command) => ({
    name: command.name,
    summary: command.summary,
    flags: [
      ...Object.entries(command.options)
        .filter(([, spec]) => spec.help !== undefined)
        .map(([name, spec]) => ({
          name,
          help: (spec.help ?? '').split('\n')[0] as string,
          value: spec.type === 'string',
          file: /FILE|DIR/.test(spec.value ?? ''),
        })),
      { name: 'help', help: 'help', value: false, file: false },
    ],
    subs: [...(command.actions ?? []), ...(command.subcommands ?? []).map((sub) => sub.name)],
    ids: command.endpointIds ?? false,
  }))
}

const IDS = `${BIN} endpoints list --ids 2>/dev/null`
const flagList = (shape: Shape, valued = false) =>
  shape.flags
    .filter((flag) => !valued || flag.value)
    .map((flag) => `--${flag.name}`)
    .join(' ')
const names = (list: readonly Shape[]) => list.map((shape) => shape.name).join(' ')
const fn = '_affiliate_webhooks'

function bash(list: readonly Shape[]): string {
  const cases = list.map(
    (s) =>
      `    ${s.name}) flags="${flagList(s)}"; valued="${flagList(s, true)}"; subs="${s.subs.join(' ')}"; ids="${s.ids ? 1 : ''}" ;;`,
  )
  return `# ${BIN} completion for bash: source <(${BIN} completion bash)
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local words="" flags="" valued="" subs="" ids=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    words="${names(list)} --help --version"
  else
    case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
    esac
    if [[ "$cur" == -* ]]; then words="$flags"
    elif [[ " $valued " == *" $prev "* ]]; then return
    elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then words="$subs"
    elif [ -n "$ids" ] && [ -n "\${AFFILIATE_API_URL:-}" ]; then words="$(${IDS})"
    else return
    fi
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F ${fn} ${BIN}
`
}

/** zsh runs the bash function through its bashcompinit layer: one script to keep right. */
const zsh = (list: readonly Shape[]) =>
  `# ${BIN} completion for zsh: source <(${BIN} completion zsh)
(( $+functions[compdef] )) || { autoload -U compinit && compinit }
autoload -U +X bashcompinit && bashcompinit
${bash(list).split('\n').slice(1).join('\n')}`

/** A fish single-quoted string. */
const quote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

function fish(list: readonly Shape[]): string {
  const c = `complete -c ${BIN}`
  const lines = [`# ${BIN} completion for fish: ${BIN} completion fish | source`, `${c} -f`]
  for (const s of list) {
    const seen = `-n '__fish_seen_subcommand_from ${s.name}'`
    lines.push(`${c} -n __fish_use_subcommand -a ${s.name} -d ${quote(s.summary)}`)
    for (const f of s.flags) {
      const value = f.value ? (f.file ? ' -r -F' : ' -r') : ''
      lines.push(`${c} ${seen} -l ${f.name}${value} -d ${quote(f.help)}`)
    }
    if (s.subs.length > 0) lines.push(`${c} ${seen} -a ${quote(s.subs.join(' '))}`)
    if (s.ids) {
      lines.push(
        `${c} -n '__fish_seen_subcommand_from ${s.name}; and set -q AFFILIATE_API_URL' -a '(${IDS})'`,
      )
    }
  }
  return `${lines.join('\n')}\n`
}

const SHELLS = { bash, zsh, fish } as const

/**
 * The `completion` command. It lists every command, itself included, so the
 * table is handed in as a getter (read when it runs) instead of imported: the
 * table imports this file.
 */
const spec: CommandSpec = {
  positionals: true,
  actions: Object.keys(SHELLS),
  usage: ['completion bash|zsh|fish'],
  about: `Prints a script that completes commands, sub-commands, flags and, when
AFFILIATE_API_URL is set, endpoint ids (asked of the service with the key in
AFFILIATE_API_KEY). Load it in the shell's startup file.`,
  options: {},
  footer: `Examples:
  source <(${BIN} completion bash)        # ~/.bashrc
  source <(${BIN} completion zsh)         # ~/.zshrc, after compinit
  ${BIN} completion fish | source         # ~/.config/fish/config.fish

Exit codes: 0 printed, 2 wrong usage.`,
}

/**
 * The `completion` command. It lists every command, itself included, so the
 * table is handed in as a getter (read when it runs) instead of imported: the
 * table imports this file. Its code is small and lives here.
 */
export const completion = (commands: () => readonly Command[]): Command => ({
  name: 'completion',
  summary: 'print a shell completion script (bash, zsh, fish)',
  spec: async () => spec,
  load: async () => ({
    async run(_values, io, positionals) {
      const shell = positionals[0]
      if (shell !== 'bash' && shell !== 'zsh' && shell !== 'fish') {
        throw new UsageError(`expected bash, zsh or fish${shell ? `, not "${shell}"` : ''}`)
      }
      if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`)
      const declared = await Promise.all(
        commands().map(async (entry) => ({ ...entry, ...(await entry.spec()) })),
      )
      io.stdout.write(SHELLS[shell](shapes(declared)))
      return EXIT.ok
    },
  }),
})
