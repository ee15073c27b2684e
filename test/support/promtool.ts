import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/** Debian's prometheus package puts promtool here; .ci/run installs it where missing. */
export const promtoolPath = '/usr/bin/promtool'

export interface PromtoolRun {
  /** 0 clean; for `check metrics`, 1 when the text does not parse and 3 for lint findings. */
  status: number
  /** promtool's findings, one a line (it writes them to stderr). */
  output: string
}

/** Runs promtool with `input` on stdin; throws, naming the fix, when it is not installed. */
export function runPromtool(args: readonly string[], input = ''): PromtoolRun {
  if (!existsSync(promtoolPath)) {
    throw new Error(
      `${promtoolPath} is missing: install Debian's prometheus package (apt-get install prometheus), as .ci/run does`,
    )
  }
  const run = spawnSync(promtoolPath, args, { input, encoding: 'utf8', timeout: 20_000 })
  if (run.error) throw run.error
  return { status: run.status ?? -1, output: `${run.stdout}${run.stderr}`.trim() }
}
