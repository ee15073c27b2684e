import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { once } from 'node:events'

/** A kinfctl subcommand in its own process, as an operator or a pod would run it. */
export interface KinfctlProcess {
  readonly name: string
  readonly child: ChildProcessWithoutNullStreams
  /** Everything it printed so far, both streams, line by line. */
  readonly lines: string[]
  /** The first line matching `pattern` (waiting for it), with its match. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  /** SIGTERM (graceful) or SIGKILL (a crash); resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export function startKinfctl(
  name: string,
  args: readonly string[],
  env: Record<string, string> = {},
): KinfctlProcess {
  // vitest runs on the pinned Node: the child gets the same binary.
  const child = spawn(process.execPath, ['control-plane/kinfctl/main.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const waiters = new Set<() => void>()
  let exited: number | null | undefined
  const exit = once(child, 'exit').then(([code]) => {
    exited = code as number | null
    for (const wake of waiters) wake()
    return exited
  })
  for (const stream of [child.stdout, child.stderr]) {
    let partial = ''
    stream.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n')
      partial = parts.pop() ?? ''
      lines.push(...parts)
      for (const wake of waiters) wake()
    })
  }
  const find = (pattern: RegExp) => {
    for (const line of lines) {
      const match = pattern.exec(line)
      if (match) return match
    }
    return null
  }
  return {
    name,
    child,
    lines,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = find(pattern)
          if (match) return done(() => resolve(match))
          if (exited !== undefined)
            done(() =>
              reject(
                new Error(
                  `${name} exited (${exited}) before printing ${pattern}:\n${lines.slice(-20).join('\n')}`,
                ),
              ),
            )
        }
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(
                  `${name} did not print ${pattern} within ${timeoutMs} ms:\n${lines.slice(-20).join('\n')}`,
                ),
              ),
            ),
          timeoutMs,
        )
        const done = (finish: () => void) => {
          clearTimeout(timer)
          waiters.delete(check)
          finish()
        }
        waiters.add(check)
        check()
      })
    },
    async stop(signal = 'SIGTERM') {
      if (exited !== undefined) return exited
      child.kill(signal)
      return exit
    },
  }
}
