import { describe, expect, it } from 'vitest'
import { type CommandSpec, helpText, parseOptions } from '../framework/command.js'
import { loadCommands } from './index.js'

const sample: CommandSpec = {
  usage: ['demo --port N', 'demo --from FILE'],
  about: 'Does a thing.',
  options: {
    port: { type: 'string', value: 'N', help: 'the port\nsecond line' },
    quiet: { type: 'boolean', short: 'q', help: 'no output' },
    hidden: { type: 'string' },
  },
  footer: 'Exit codes: 0 done.',
}

const commands = await loadCommands()

describe('help from the declaration', () => {
  it('renders usage lines, aligned flags with continuations, and skips flags without help', () => {
    expect(helpText('demo', sample)).toBe(
      [
        'Usage: affiliate-webhooks demo --port N',
        '       affiliate-webhooks demo --from FILE',
        '',
        'Does a thing.',
        '',
        '  --port N   the port',
        '             second line',
        '  --quiet    no output',
        '',
        'Exit codes: 0 done.',
      ].join('\n'),
    )
  })

  it('gives parseArgs only what it reads', () => {
    expect(parseOptions(sample.options)).toEqual({
      port: { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      hidden: { type: 'string' },
    })
  })

  it.each(commands.map((c) => [c.name, c] as const))(
    '%s: every flag its usage names is declared, and every declared flag is listed',
    (_name, command) => {
      const usageFlags = command.usage.join(' ').match(/--[a-z][a-z-]*/g) ?? []
      for (const flag of usageFlags) expect(Object.keys(command.options)).toContain(flag.slice(2))
      const help = helpText(command.name, command)
      for (const [name, spec] of Object.entries(command.options)) {
        if (spec.help !== undefined) expect(help).toContain(`--${name}`)
      }
    },
  )
})
