import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type CliIo, exitCode, exitCodeOf, exitStatusHelp, UsageError } from './cli-io.ts'
import { benchCommand, benchUsage } from './commands/bench.ts'
import { compileCommand, compileUsage } from './commands/compile.ts'
import { controllerCommand, controllerUsage } from './commands/controller.ts'
import { crdsCommand, crdsUsage } from './commands/crds.ts'
import { edgeCommand, edgeUsage } from './commands/edge.ts'
import { explainCommand, explainUsage } from './commands/explain.ts'
import { keyCommand, keyUsage } from './commands/key.ts'
import { piiCommand, piiUsage } from './commands/pii.ts'
import { scorerCommand, scorerUsage } from './commands/scorer.ts'
import { simCommand, simUsage } from './commands/sim.ts'
import { upCommand, upUsage } from './commands/up.ts'
import { validateCommand, validateUsage } from './commands/validate.ts'

interface Command {
  run: (args: string[], io: CliIo) => Promise<number>
  usage: string
  summary: string
}

const commands: Record<string, Command> = {
  validate: { run: validateCommand, usage: validateUsage, summary: 'check resources offline' },
  compile: {
    run: compileCommand,
    usage: compileUsage,
    summary: 'write the runtime config snapshot',
  },
  explain: { run: explainCommand, usage: explainUsage, summary: 'show a policy decision offline' },
  crds: { run: crdsCommand, usage: crdsUsage, summary: 'generate the CustomResourceDefinitions' },
  key: { run: keyCommand, usage: keyUsage, summary: 'mint an API key and print its hash' },
  controller: {
    run: controllerCommand,
    usage: controllerUsage,
    summary: 'run the Kubernetes controller (CRDs in, status and snapshots out)',
  },
  sim: { run: simCommand, usage: simUsage, summary: 'run simulated vLLM pods' },
  scorer: { run: scorerCommand, usage: scorerUsage, summary: 'run the KV-cache-aware scorer' },
  edge: { run: edgeCommand, usage: edgeUsage, summary: 'run the edge (OpenAI API) on Node' },
  up: { run: upCommand, usage: upUsage, summary: 'run the embedded default (pods, scorer, edge)' },
  pii: { run: piiCommand, usage: piiUsage, summary: 'print the PII labels of each input line' },
  bench: {
    run: benchCommand,
    usage: benchUsage,
    summary: 'benchmark routing strategies side by side',
  },
}

const usage = `Usage: kinfctl <command> [options]

Commands:
${Object.entries(commands)
  .map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  .join('\n')}

Run kinfctl <command> --help for a command's options.

Exit status (below each, the error codes that give it):
${exitStatusHelp()}
`

/**
 * Runs one kinfctl invocation and returns its exit status. Never throws: usage
 * mistakes exit 2 with the usage text; a KinfError exits as its code says
 * (exitCodeOf), anything else exits 1; both with one line.
 */
export async function runKinfctl(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    ;(name === undefined ? io.stderr : io.stdout)(usage)
    return name === undefined ? exitCode.usage : exitCode.ok
  }
  const command = commands[name]
  if (command === undefined) {
    io.stderr(`kinfctl: unknown command "${name}"\n\n${usage}`)
    return exitCode.usage
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(command.usage)
    return exitCode.ok
  }
  try {
    return await command.run(args, io)
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.stderr(`kinfctl ${name}: ${(error as Error).message}\n\n${command.usage}`)
      return exitCode.usage
    }
    io.stderr(`kinfctl ${name}: ${error instanceof Error ? error.message : String(error)}\n`)
    return KinfError.isInstance(error) ? exitCodeOf(error.code) : exitCode.invalid
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')
}
