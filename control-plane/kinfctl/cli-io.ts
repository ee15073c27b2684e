import { KinfErrorCode } from '../../shared/errors/kinf-error.ts'

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

/** Exit codes: 0 to 2 as kubeconform uses them, then one per kind of failure a script can act on. */
export const exitCode = {
  ok: 0,
  invalid: 1,
  usage: 2,
  notFound: 3,
  denied: 4,
  unavailable: 5,
  upstreamFailed: 6,
  internal: 7,
} as const
export type ExitCode = (typeof exitCode)[keyof typeof exitCode]

/** The exit status of a failed command, from its KinfError's code: the one mapping. */
const exitByErrorCode: Record<KinfErrorCode, ExitCode> = {
  invalid_request: exitCode.invalid,
  invalid_config: exitCode.invalid,
  payload_too_large: exitCode.invalid,
  not_found: exitCode.notFound,
  unauthorized: exitCode.denied,
  forbidden: exitCode.denied,
  // Retrying later may succeed (HTTP 503 or 429 with Retry-After).
  upstream_unavailable: exitCode.unavailable,
  saturated: exitCode.unavailable,
  rate_limited: exitCode.unavailable,
  locality_violation: exitCode.unavailable,
  upstream_error: exitCode.upstreamFailed,
  internal: exitCode.internal,
}

export function exitCodeOf(code: KinfErrorCode): ExitCode {
  return exitByErrorCode[code]
}

const exitMeaning: Record<ExitCode, string> = {
  0: 'success',
  1: 'invalid input or config (validate: an invalid resource), or an unexpected error',
  2: 'usage: an unknown command or option, a missing or malformed argument, a lab command where the lab is left out',
  3: 'something named does not exist',
  4: 'not authorized, or forbidden',
  5: 'unavailable for now (unreachable, saturated, rate-limited): retry later',
  6: 'an upstream answered with an error',
  7: 'internal error (a bug)',
}

/** kinfctl --help's exit statuses, each with the error codes that give it, from the mapping. */
export function exitStatusHelp(): string {
  return Object.entries(exitMeaning)
    .map(([status, meaning]) => {
      const codes = KinfErrorCode.options.filter((code) => String(exitByErrorCode[code]) === status)
      return `  ${status}  ${meaning}${codes.length > 0 ? `\n       ${codes.join(', ')}` : ''}`
    })
    .join('\n')
}

/** A command-line mistake: reported with the command's usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}
