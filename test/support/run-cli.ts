import type { CliIo } from '../../control-plane/kinfctl/cli-io.ts'
import { runKinfctl } from '../../control-plane/kinfctl/run-kinfctl.ts'

/**
 * Runs kinfctl in-process and captures what it prints. A long-running command runs until
 * `interrupted` (never, unless given) with the environment `env` (empty, unless given).
 */
export async function runCli(
  argv: string[],
  stdin = '',
  options: { env?: Record<string, string>; interrupted?: () => Promise<void> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runKinfctl(argv, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    readStdin: async () => stdin,
    untilInterrupted: options.interrupted ?? (() => new Promise<void>(() => {})),
    env: options.env ?? {},
  })
  return { code, stdout, stderr }
}

/** A long-running command in this process, what it printed so far, and a stop. */
export interface RunningCommand {
  stdout(): string
  stderr(): string
  /** The exit code, once the command returns. */
  exited: Promise<number>
  /** Interrupts it (as SIGINT would) and waits for its exit code. */
  stop(): Promise<number>
}

/** Starts `command` (scorerCommand, say) with `args` and the environment `env`. */
export function startCommand(
  command: (args: string[], io: CliIo) => Promise<number>,
  args: string[],
  env: Record<string, string> = {},
): RunningCommand {
  let stdout = ''
  let stderr = ''
  let interrupt = () => {}
  const interrupted = new Promise<void>((resolve) => {
    interrupt = resolve
  })
  const exited = command(args, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    readStdin: async () => '',
    untilInterrupted: () => interrupted,
    env,
  })
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop: () => {
      interrupt()
      return exited
    },
  }
}
