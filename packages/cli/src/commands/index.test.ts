import { describe, expect, it } from 'vitest'
import { type Command, helpText, parseOptions } from '../framework/command.js'
import { COMMANDS } from './index.js'

const sample: Command = {
  name: 'demo',
  summary: 'a command for the test',
  usage: ['demo --port N', 'demo --from FILE'],
  about: 'Does a thing.',
  options: {
    port: { type: 'string', value: 'N', help: 'the port\nsecond line' },
    quiet: { type: 'boolean', short: 'q', help: 'no output' },
    hidden: { type: 'string' },
  },
  footer: 'Exit codes: 0 done.',
  run: async () => 0,
}

describe('help from the declaration', () => {
  it('renders usage lines, aligned flags with continuations, and skips flags without help', () => {
    expect(helpText(sample)).toBe(
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

  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    '%s: every flag its usage names is declared, and every declared flag is listed',
    (_name, command) => {
      const usageFlags = command.usage.join(' ').match(/--[a-z][a-z-]*/g) ?? []
      for (const flag of usageFlags) expect(Object.keys(command.options)).toContain(flag.slice(2))
      const help = helpText(command)
      for (const [name, spec] of Object.entries(command.options)) {
        if (spec.help !== undefined) expect(help).toContain(`--${name}`)
      }
    },
  )
})
