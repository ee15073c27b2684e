import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type CliIo, exitCode, exitCodeOf, exitStatusHelp, UsageError } from './cli-io.ts'
import type { KinfctlCommand, Loaded } from './kinfctl-command.ts'
import { labCommands } from './lab-commands.ts'

/** The user-facing commands, all in the image; each imported on use (KinfctlCommand.load). */
const commands: Record<string, KinfctlCommand> = {
  validate: {
    summary: 'check resources offline',
    load: async () => {
      const { validateCommand: run, validateUsage: usage } = await import('./commands/validate.ts')
      return { run, usage }
    },
  },
  compile: {
    summary: 'write the runtime config snapshot',
    load: async () => {
      const { compileCommand: run, compileUsage: usage } = await import('./commands/compile.ts')
      return { run, usage }
    },
  },
  explain: {
    summary: 'show a policy decision offline',
    load: async () => {
      const { explainCommand: run, explainUsage: usage } = await import('./commands/explain.ts')
      return { run, usage }
    },
  },
  crds: {
    summary: 'generate the CustomResourceDefinitions',
    load: async () => {
      const { crdsCommand: run, crdsUsage: usage } = await import('./commands/crds.ts')
      return { run, usage }
    },
  },
  key: {
    summary: 'mint an API key and print its hash',
    load: async () => {
      const { keyCommand: run, keyUsage: usage } = await import('./commands/key.ts')
      return { run, usage }
    },
  },
  controller: {
    summary: 'run the Kubernetes controller (CRDs in, status and snapshots out)',
    load: async () => {
      const { controllerCommand: run, controllerUsage: usage } = await import(
        './commands/controller.ts'
      )
      return { run, usage }
    },
  },
  scorer: {
    summary: 'run the KV-cache-aware scorer',
    load: async () => {
      const { scorerCommand: run, scorerUsage: usage } = await import('./commands/scorer.ts')
      return { run, usage }
    },
  },
  edge: {
    summary: 'run the edge (OpenAI API) on Node',
    load: async () => {
      const { edgeCommand: run, edgeUsage: usage } = await import('./commands/edge.ts')
      return { run, usage }
    },
  },
  inspect: {
    summary: 'show the shared state in Redis (pods, prefix, decisions, tenants, snapshot)',
    load: async () => {
      const { inspectCommand: run, inspectUsage: usage } = await import('./commands/inspect.ts')
      return { run, usage }
    },
  },
  pii: {
    summary: 'print the PII labels of each input line',
    load: async () => {
      const { piiCommand: run, piiUsage: usage } = await import('./commands/pii.ts')
      return { run, usage }
    },
  },
  version: {
    summary: 'print the version (also kinfctl --version)',
    load: async () => {
      const { versionCommand: run, versionUsage: usage } = await import('./commands/version.ts')
      return { run, usage }
    },
  },
  completion: {
    summary: 'print a completion script for bash, zsh or fish',
    load: async () => {
      const { completionCommand, completionUsage: usage } = await import('./commands/completion.ts')
      return { run: (args, io) => completionCommand(args, io, kinfctlCommands()), usage }
    },
  },
}

/** Every command kinfctl has, the lab's included (which say so where the lab is absent). */
export function kinfctlCommands(): Readonly<Record<string, KinfctlCommand>> {
  return { ...commands, ...labCommands }
}

const list = (table: Record<string, KinfctlCommand>) =>
  Object.entries(table)
    .map(([name, command]) => `  ${name.padEnd(11)} ${command.summary}`)
    .join('\n')

const usage = `Usage: kinfctl <command> [options]

Commands:
${list(commands)}

Lab commands (in a clone of the repository, not in the image):
${list(labCommands)}

Run kinfctl <command> --help for a command's options, kinfctl --version for the version.

Exit status (below each, the error codes that give it):
${exitStatusHelp()}
`

/**
 * Runs one kinfctl invocation and returns its exit status. Never throws: usage
 * mistakes exit 2 with the usage text; a KinfError exits as its code says
 * (exitCodeOf), anything else exits 1; both with one line.
 */
export async function runKinfctl(argv: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    ;(first === undefined ? io.stderr : io.stdout)(usage)
    return first === undefined ? exitCode.usage : exitCode.ok
  }
  // --version is the version command; -v is not, as it is validate's --verbose.
  const [name, args] = first === '--version' ? ['version', rest] : [first, rest]
  const entry = Object.hasOwn(commands, name)
    ? commands[name]
    : Object.hasOwn(labCommands, name)
      ? labCommands[name]
      : undefined
  if (entry === undefined) {
    io.stderr(`kinfctl: unknown command "${name}"\n\n${usage}`)
    return exitCode.usage
  }
  const loaded = await entry.load()
  if ('unavailable' in loaded) {
    io.stderr(`${loaded.unavailable}\n`)
    return exitCode.usage
  }
  return runCommand(`kinfctl ${name}`, loaded, args, io)
}

/**
 * One command's run with kinfctl's conventions (--help, usage errors exit 2 with the
 * usage text, a KinfError as its code says), for kinfctl and for tools with a main of
 * their own (npm run chaos).
 */
export async function runCommand(
  label: string,
  command: Loaded,
  args: string[],
  io: CliIo,
): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(command.usage)
    return exitCode.ok
  }
  try {
    return await command.run(args, io)
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.stderr(`${label}: ${(error as Error).message}\n\n${command.usage}`)
      return exitCode.usage
    }
    io.stderr(`${label}: ${error instanceof Error ? error.message : String(error)}\n`)
    return KinfError.isInstance(error) ? exitCodeOf(error.code) : exitCode.invalid
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}
