import { runCommand } from '../../kinfctl/run-kinfctl.ts'
import { chaosCommand, chaosUsage } from './chaos-command.ts'

/**
 * npm run chaos (the full version, recorded in docs/reliability.md) and npm run test:chaos
 * (CI's short one). A developer's and CI's tool like the benchmarks, so not a kinfctl
 * command: the image leaves out what it needs (the openai client, the test API server).
 */
process.exitCode = await runCommand(
  'npm run chaos',
  { run: chaosCommand, usage: chaosUsage },
  process.argv.slice(2),
  {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => '',
    env: process.env,
    untilInterrupted: () => new Promise<void>((resolve) => process.once('SIGINT', () => resolve())),
  },
)
