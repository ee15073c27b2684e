import { parseArgs } from 'node:util'
import { type CliIo, exitCode, UsageError } from '../cli-io.ts'
import { type CommandSpec, commandSpec } from '../command-spec.ts'
import { bashCompletion, fishCompletion, zshCompletion } from '../completion-scripts.ts'
import type { KinfctlCommand } from '../kinfctl-command.ts'

export const completionUsage = `Usage: kinfctl completion <bash|zsh|fish>

Prints a completion script for the shell: kinfctl's commands, each command's options,
the formats -o takes and the words a command's first argument can be (inspect's views),
all read from the commands' usage texts (what --help prints), so they cannot disagree.
Lab commands are included where the lab is (a clone of the repository). Generating it
loads every command: write it to a file once rather than on every shell start.

  bash:  source <(kinfctl completion bash)
         kinfctl completion bash > ~/.local/share/bash-completion/completions/kinfctl
  zsh:   source <(kinfctl completion zsh)          (after compinit)
         kinfctl completion zsh > "\${fpath[1]}/_kinfctl"
  fish:  kinfctl completion fish | source
         kinfctl completion fish > ~/.config/fish/completions/kinfctl.fish
`

const shells = {
  bash: bashCompletion,
  zsh: zshCompletion,
  fish: fishCompletion,
} as const

/** `kinfctl completion`, given kinfctl's command table (run-kinfctl.ts passes it). */
export async function completionCommand(
  args: string[],
  io: CliIo,
  commands: Readonly<Record<string, KinfctlCommand>>,
): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} })
  const [shell, ...extra] = positionals
  if (shell === undefined) throw new UsageError('name the shell: bash, zsh or fish')
  if (!Object.hasOwn(shells, shell))
    throw new UsageError(`no completion for "${shell}": bash, zsh or fish`)
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`)
  io.stdout(shells[shell as keyof typeof shells](await commandSpecs(commands)))
  return exitCode.ok
}

/** Every command this installation holds, as its usage describes it; lab ones where the lab is. */
export async function commandSpecs(
  commands: Readonly<Record<string, KinfctlCommand>>,
): Promise<CommandSpec[]> {
  const specs: CommandSpec[] = []
  for (const [name, command] of Object.entries(commands)) {
    const loaded = await command.load()
    if ('unavailable' in loaded) continue
    specs.push(commandSpec(name, command.summary, loaded.usage))
  }
  return specs
}
