import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandSpec } from '../../../control-plane/kinfctl/command-spec.ts'
import { commandSpecs } from '../../../control-plane/kinfctl/commands/completion.ts'
import { kinfctlCommands } from '../../../control-plane/kinfctl/run-kinfctl.ts'
import { runCli } from '../../support/run-cli.ts'

const launcher = resolve('control-plane/kinfctl/kinfctl.js')
const hasShell = (shell: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${shell}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The commands kinfctl --help lists, lab ones included (this is a clone). */
async function listedCommands(): Promise<string[]> {
  const { stdout } = await runCli(['--help'])
  return [...stdout.matchAll(/^ {2}([a-z]+) {2,}\S/gm)].map((m) => m[1] ?? '')
}

/**
 * bash as a user's shell runs it: `source <(kinfctl completion bash)` with kinfctl the
 * repository's launcher, then, per line of `lines`, the words typed (the last one being
 * completed, possibly empty): COMP_WORDS and COMP_CWORD set and _kinfctl called, and
 * COMPREPLY printed on a line of its own, sorted.
 */
async function complete(lines: string[][]): Promise<string[][]> {
  const cases = lines.map((words) => {
    const quoted = words.map((word) => `'${word}'`).join(' ')
    return `COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _kinfctl; printf '%s\\n' "$(printf '%s\\n' "\${COMPREPLY[@]}" | sort | tr '\\n' ' ')"`
  })
  const script = [
    'export LC_ALL=C',
    `kinfctl() { '${process.execPath}' '${launcher}' "$@"; }`,
    'source <(kinfctl completion bash)',
    'complete -p kinfctl',
    ...cases,
  ].join('\n')
  const { stdout } = await promisify(execFile)('bash', ['-c', script])
  const [registration, ...replies] = stdout.split('\n')
  expect(registration).toBe('complete -o default -F _kinfctl kinfctl')
  return replies.slice(0, lines.length).map((line) => line.split(' ').filter((w) => w !== ''))
}

describe('kinfctl completion bash, in bash', () => {
  let replies: string[][] = []
  const typed: string[][] = [
    ['kinfctl', ''],
    ['kinfctl', 'ins'],
    ['kinfctl', 'comp'],
    ['kinfctl', '--ver'],
    ['kinfctl', 'inspect', ''],
    ['kinfctl', 'inspect', 'pods', ''],
    ['kinfctl', 'inspect', '--redis', 'redis://r', ''],
    ['kinfctl', 'inspect', '-o', ''],
    ['kinfctl', 'inspect', 'decisions', '--s'],
    ['kinfctl', 'controller', '--con'],
    ['kinfctl', 'controller', '--kube'],
    ['kinfctl', 'completion', ''],
    ['kinfctl', 'compile', '--ou'],
    ['kinfctl', 'compile', '-o', ''],
    ['kinfctl', 'validate', '--output', 'j'],
    ['kinfctl', 'bench', '--mode', ''],
    ['kinfctl', 'bench', '--suite', ''],
    ['kinfctl', 'bench', '--api'],
    ['kinfctl', 'key', ''],
    ['kinfctl', 'version', '-'],
  ]
  beforeAll(async () => {
    replies = await complete(typed)
  }, 60_000)
  const reply = (...words: string[]) =>
    replies[typed.findIndex((t) => JSON.stringify(t) === JSON.stringify(words))]

  it('completes the commands --help lists, and kinfctl’s own options', async () => {
    const commands = await listedCommands()
    expect(commands).toEqual(expect.arrayContaining(['version', 'completion', 'controller']))
    expect(reply('kinfctl', '')).toEqual([...commands, '--help', '--version'].sort())
    expect(reply('kinfctl', 'ins')).toEqual(['inspect'])
    expect(reply('kinfctl', 'comp')).toEqual(['compile', 'completion'])
    expect(reply('kinfctl', '--ver')).toEqual(['--version'])
  })

  it('completes a command’s first argument from its usage, once', () => {
    expect(reply('kinfctl', 'inspect', '')).toEqual(
      ['decisions', 'pods', 'prefix', 'snapshot', 'tenants'].sort(),
    )
    expect(reply('kinfctl', 'inspect', 'pods', '')).toEqual([])
    // An option's value is not the argument.
    expect(reply('kinfctl', 'inspect', '--redis', 'redis://r', '')).toHaveLength(5)
    expect(reply('kinfctl', 'completion', '')).toEqual(['bash', 'fish', 'zsh'])
    expect(reply('kinfctl', 'key', '')).toEqual(['mint'])
  })

  it('completes options, and the values an option lists', () => {
    expect(reply('kinfctl', 'inspect', '-o', '')).toEqual(['json', 'table', 'yaml'])
    expect(reply('kinfctl', 'inspect', 'decisions', '--s')).toEqual(['--since'])
    expect(reply('kinfctl', 'controller', '--con')).toEqual(['--context'])
    expect(reply('kinfctl', 'controller', '--kube')).toEqual(['--kubeconfig'])
    expect(reply('kinfctl', 'compile', '--ou')).toEqual(['--out', '--output'])
    expect(reply('kinfctl', 'compile', '-o', '')).toEqual(['json'])
    expect(reply('kinfctl', 'validate', '--output', 'j')).toEqual(['json'])
    expect(reply('kinfctl', 'bench', '--mode', '')).toEqual(['des', 'live'])
    expect(reply('kinfctl', 'bench', '--suite', '')).toEqual(
      ['headline', 'routing', 'slo', 'targets'].sort(),
    )
    expect(reply('kinfctl', 'bench', '--api')).toEqual(['--api-key'])
    expect(reply('kinfctl', 'version', '-')).toEqual(['--help', '--output', '-o'])
  })
})

describe('kinfctl completion zsh and fish', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kinfctl-completion-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it.each(['zsh', 'fish'])('%s: a script naming every command', async (shell) => {
    const { code, stdout } = await runCli(['completion', shell])
    expect(code).toBe(0)
    for (const name of await listedCommands()) expect(stdout).toContain(name)
    expect(stdout).toContain(shell === 'zsh' ? "'version:print the version" : '-a version')
  })

  it.skipIf(!hasShell('zsh'))(
    'zsh: parses (zsh -n) [skipped: no zsh on this machine]',
    async () => {
      const file = join(dir, '_kinfctl')
      writeFileSync(file, (await runCli(['completion', 'zsh'])).stdout)
      execFileSync('zsh', ['-n', file])
    },
  )

  it.skipIf(!hasShell('fish'))(
    'fish: parses (fish --no-execute) [skipped: no fish on this machine]',
    async () => {
      const file = join(dir, 'kinfctl.fish')
      writeFileSync(file, (await runCli(['completion', 'fish'])).stdout)
      execFileSync('fish', ['--no-execute', file])
    },
  )

  it('bash: parses (bash -n)', async () => {
    const file = join(dir, 'kinfctl.bash')
    writeFileSync(file, (await runCli(['completion', 'bash'])).stdout)
    execFileSync('bash', ['-n', file])
  })

  it('refuses another shell, or none, as a usage error', async () => {
    const other = await runCli(['completion', 'powershell'])
    expect(other.code).toBe(2)
    expect(other.stderr).toContain('no completion for "powershell": bash, zsh or fish')
    expect((await runCli(['completion'])).code).toBe(2)
  })
})

describe('commandSpec: a command as its usage states it', () => {
  it('reads options, their values, the first argument and synopsis-only options', () => {
    const usage = `Usage: kinfctl thing <alpha|beta> [options]

  alpha [--only-alpha F] [--flag]    what alpha does

Options:
  -o, --output table|json   output format (default table)
      --out FILE            where to write
      --count N             how many
      --mode fast           the fast mode
      --mode slow           the slow mode
                            --not-an-option mentioned in prose
`
    const spec = commandSpec('thing', 'does things', usage)
    expect(spec.choices).toEqual(['alpha', 'beta'])
    expect(spec.files).toBe(false)
    const byName = Object.fromEntries(spec.options.map((o) => [o.long, o]))
    expect(Object.keys(byName).sort()).toEqual(
      ['count', 'flag', 'mode', 'only-alpha', 'out', 'output'].sort(),
    )
    expect(byName.output).toMatchObject({
      short: 'o',
      value: 'choices',
      choices: ['table', 'json'],
      description: 'output format (default table)',
    })
    expect(byName.out?.value).toBe('file')
    expect(byName.count?.value).toBe('any')
    expect(byName.mode?.choices).toEqual(['fast', 'slow'])
    expect(byName['only-alpha']?.value).toBe('file')
    expect(byName.flag?.value).toBe('none')
  })

  it('takes file arguments from <file|->', () => {
    const spec = commandSpec('pii', '', 'Usage: kinfctl pii [options] <file|->\n')
    expect(spec).toMatchObject({ choices: null, files: true })
  })
})

describe('kinfctl’s options, read from every command’s usage', () => {
  it('-o is the output format wherever a command has it, never a file', async () => {
    const specs = await commandSpecs(kinfctlCommands())
    const withO = specs.filter((spec) => spec.options.some((option) => option.short === 'o'))
    expect(withO.map((spec) => spec.name).sort()).toEqual(
      ['compile', 'explain', 'inspect', 'sim', 'validate', 'version'].sort(),
    )
    for (const spec of specs) {
      const output = spec.options.find((option) => option.long === 'output')
      if (!output) continue
      expect(output, spec.name).toMatchObject({ short: 'o', value: 'choices' })
      expect(output.choices, spec.name).toContain('json')
    }
  })

  it('--kubeconfig and --context go together, on every command that talks to a cluster', async () => {
    const specs = await commandSpecs(kinfctlCommands())
    const has = (name: string) =>
      specs.filter((spec) => spec.options.some((option) => option.long === name)).map((s) => s.name)
    expect(has('kubeconfig')).toEqual(['controller'])
    expect(has('context')).toEqual(has('kubeconfig'))
  })
})
