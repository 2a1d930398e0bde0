/**
 * `completion bash|zsh|fish`: each script is loaded by the real shell (`-n`
 * parses it; a shell that is missing fails the test: .ci/run installs zsh and
 * fish), and bash and fish are asked for completions: commands, flags, and the
 * endpoint ids of an emulator started as users start it.
 */
import { execFile } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { loadCommands } from '../../packages/cli/src/commands/index.js'
import { CLI, killLive, startLoop } from '../support/cli-live.js'
import { run } from '../support/run-process.js'

const exec = promisify(execFile)
const work = mkdtempSync(join(tmpdir(), 'aw-completion-'))
// The scripts call `affiliate-webhooks` by name, as an installed CLI is called.
const bin = join(work, 'bin')
afterEach(() => killLive())
afterAll(() => rmSync(work, { recursive: true, force: true }))

async function script(shell: string): Promise<string> {
  const printed = await run(process.execPath, [CLI, 'completion', shell])
  expect(printed.code, printed.stderr).toBe(0)
  const file = join(work, `completion.${shell}`)
  writeFileSync(file, printed.stdout)
  return file
}

function onPath(): Record<string, string> {
  mkdirSync(bin, { recursive: true })
  const wrapper = join(bin, 'affiliate-webhooks')
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`)
  chmodSync(wrapper, 0o755)
  return { PATH: `${bin}:${process.env.PATH}` }
}

/** What bash's completion function offers for the words typed so far (the last one being completed). */
async function bashComplete(file: string, words: string[], env: Record<string, string> = {}) {
  const array = words.map((word) => `'${word}'`).join(' ')
  const { stdout } = await exec(
    'bash',
    [
      '-c',
      `source '${file}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _affiliate_webhooks; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { env: { ...process.env, ...env } },
  )
  return stdout.split('\n').filter(Boolean)
}

async function fishComplete(file: string, line: string, env: Record<string, string> = {}) {
  const { stdout } = await exec('fish', ['-c', `source '${file}'; complete -C '${line}'`], {
    env: { ...process.env, ...env },
  })
  return stdout.split('\n').map((entry) => entry.split('\t')[0])
}

describe('completion', () => {
  it.each(['bash', 'zsh', 'fish'])(
    "the %s script parses with the shell's -n and names every command and flag",
    async (shell) => {
      const file = await script(shell)
      await exec(`/usr/bin/${shell}`, ['-n', file])
      const text = (await run(process.execPath, [CLI, 'completion', shell])).stdout
      for (const command of await loadCommands()) {
        expect(text).toContain(command.name)
        for (const [flag, spec] of Object.entries(command.options)) {
          if (spec.help !== undefined)
            expect(text, `${command.name} --${flag}`).toMatch(new RegExp(`(--| -l )${flag}\\b`))
        }
      }
    },
  )

  it("bash completes commands, sub-commands, flags and the emulator's endpoint ids", async () => {
    const file = await script('bash')
    expect(await bashComplete(file, ['affiliate-webhooks', 'del'])).toEqual(['deliveries'])
    expect(await bashComplete(file, ['affiliate-webhooks', 'deliveries', '--fo'])).toEqual([
      '--follow',
    ])
    expect(await bashComplete(file, ['affiliate-webhooks', 'trigger', 'conversion.'])).toEqual([
      'conversion.created',
      'conversion.updated',
    ])
    expect(await bashComplete(file, ['affiliate-webhooks', 'endpoints', 'dis'])).toEqual([
      'disable',
    ])

    const { cli, env } = await startLoop()
    const made = await cli(
      'endpoints',
      'create',
      '--url',
      'http://127.0.0.1:9/hooks',
      '--show-secret',
    )
    const id = /^id\s+(\S+)$/m.exec(made.stdout)?.[1] as string
    const path = onPath()
    expect(
      await bashComplete(file, ['affiliate-webhooks', 'deliveries', ''], { ...env, ...path }),
    ).toEqual([id])
    expect(
      await bashComplete(file, ['affiliate-webhooks', 'endpoints', 'get', 'wh'], {
        ...env,
        ...path,
      }),
    ).toEqual([id])
    // A flag's value is not an endpoint id: bash falls back to its default.
    expect(
      await bashComplete(file, ['affiliate-webhooks', 'deliveries', id, '--status', ''], {
        ...env,
        ...path,
      }),
    ).toEqual([])
    // Without AFFILIATE_API_URL nothing is asked of any service.
    expect(
      await bashComplete(file, ['affiliate-webhooks', 'deliveries', ''], {
        ...path,
        AFFILIATE_API_URL: '',
      }),
    ).toEqual([])
  }, 30_000)

  it("fish completes commands, flags and the emulator's endpoint ids", async () => {
    const file = await script('fish')
    expect(await fishComplete(file, 'affiliate-webhooks tri')).toContain('trigger')
    expect(await fishComplete(file, 'affiliate-webhooks trigger --sale')).toContain('--sale-amount')
    const { cli, env } = await startLoop()
    const made = await cli(
      'endpoints',
      'create',
      '--url',
      'http://127.0.0.1:9/hooks',
      '--show-secret',
    )
    const id = /^id\s+(\S+)$/m.exec(made.stdout)?.[1] as string
    expect(
      await fishComplete(file, 'affiliate-webhooks recover ', { ...env, ...onPath() }),
    ).toContain(id)
  }, 30_000)

  it('zsh registers it with its completion system and gets the same words', async () => {
    const file = await script('zsh')
    const registered = await exec('zsh', [
      '-c',
      `source '${file}'; print -r -- \${_comps[affiliate-webhooks]}`,
    ])
    expect(registered.stdout.trim()).toBe('_bash_complete -o default -F _affiliate_webhooks')
    // bashcompinit calls the function under `emulate sh`, then zsh matches the prefix.
    const offered = await exec('zsh', [
      '-c',
      `source '${file}'; emulate sh; COMP_WORDS=(affiliate-webhooks trigger --sa); COMP_CWORD=2; _affiliate_webhooks; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ])
    expect(offered.stdout.split('\n')).toContain('--sale-amount')
  })

  it('every declared sub-command is offered after its command, in bash, zsh and fish', async () => {
    const [bash, zsh, fish] = await Promise.all(['bash', 'zsh', 'fish'].map(script))
    const withSubs = (await loadCommands())
      .map((command) => ({
        name: command.name,
        subs: [...(command.actions ?? []), ...(command.subcommands ?? []).map((sub) => sub.name)],
      }))
      .filter((command) => command.subs.length > 0)
    expect(withSubs.map((command) => command.name)).toContain('emulator')
    for (const { name, subs } of withSubs) {
      expect(await bashComplete(bash as string, ['affiliate-webhooks', name, '']), name).toEqual(
        subs,
      )
      const zshOffered = await exec('zsh', [
        '-c',
        `source '${zsh}'; emulate sh; COMP_WORDS=(affiliate-webhooks ${name} ''); COMP_CWORD=2; _affiliate_webhooks; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ])
      expect(zshOffered.stdout.split('\n').filter(Boolean), name).toEqual(subs)
      const fishOffered = await fishComplete(fish as string, `affiliate-webhooks ${name} `)
      for (const sub of subs) expect(fishOffered, `${name} ${sub}`).toContain(sub)
    }
  }, 60_000)

  it('an unknown shell: one line, exit 2', async () => {
    const result = await run(process.execPath, [CLI, 'completion', 'powershell'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/expected bash, zsh or fish, not "powershell"/)
  })
})
