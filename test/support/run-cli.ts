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
