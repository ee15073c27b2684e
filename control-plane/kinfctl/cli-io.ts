/** What a kinfctl command may touch of its process; main.ts provides the real one. */
export interface CliIo {
  stdout: (text: string) => void
  stderr: (text: string) => void
  readStdin: () => Promise<string>
  /** Resolves when the process is asked to stop (SIGINT, SIGTERM): long-running commands wait on it. */
  untilInterrupted: () => Promise<void>
  /** Whether stderr is a terminal (progress bars redraw in place there). */
  stderrIsTty?: boolean
  /** The environment, read here and nowhere else. */
  env: Readonly<Record<string, string | undefined>>
}

/** Exit codes, as kubeconform uses them. */
export const exitCode = { ok: 0, invalid: 1, usage: 2 } as const

/** A command-line mistake: reported with the command's usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}
