import { runKinfctl } from '../../control-plane/kinfctl/run-kinfctl.ts'

/** Runs kinfctl in-process and captures what it prints. */
export async function runCli(
  argv: string[],
  stdin = '',
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
    untilInterrupted: () => new Promise<void>(() => {}),
    env: {},
  })
  return { code, stdout, stderr }
}
