import { runCommand } from '../../kinfctl/run-kinfctl.ts'
import { anatomyCommand, anatomyUsage } from './anatomy-command.ts'

/**
 * A developer's tool beside the benchmarks (so not a kinfctl command): where a workload's
 * TTFT goes, request by request.
 */
process.exitCode = await runCommand(
  'anatomy',
  { run: anatomyCommand, usage: anatomyUsage },
  process.argv.slice(2),
  {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => '',
    env: process.env,
    untilInterrupted: () => new Promise<void>((resolve) => process.once('SIGINT', () => resolve())),
  },
)
