import type { PublishedSnapshot } from './published-snapshot.ts'
import type { CurrentRead } from './read-current-snapshot.ts'

export interface FollowStateOptions {
  log: (line: string) => void
  onSnapshot?: ((published: PublishedSnapshot) => void | Promise<void>) | undefined
  onRefused?: ((reason: string, version: number | null) => void) | undefined
}

/**
 * What a snapshot follower holds and what it makes of each read of config:current: a newer
 * verified version is taken, a refused one remembered (so it is not read again), an older
 * one ignored. Each problem is logged once, not on every poll.
 */
export function createFollowState(options: FollowStateOptions) {
  const { log } = options
  const listeners = new Set<(published: PublishedSnapshot) => void>()
  let held: PublishedSnapshot | null = null
  let refusedVersion = 0
  let lastProblem = ''
  let unreachable = false

  function note(problem: string) {
    if (problem !== lastProblem) log(problem)
    lastProblem = problem
  }

  async function take(published: PublishedSnapshot) {
    held = published
    try {
      await options.onSnapshot?.(published)
      for (const listener of listeners) listener(published)
    } catch (error) {
      log(`config follower: applying version ${published.version} failed: ${messageOf(error)}`)
    }
  }

  return {
    held: () => held,
    /** The newest version seen, taken or refused: only a newer one is worth reading. */
    known: () => Math.max(held?.version ?? 0, refusedVersion),
    listeners,

    failed(error: unknown) {
      if (!unreachable) log(`config follower: ${messageOf(error)}; keeping ${describe(held)}`)
      unreachable = true
    },

    async accept(read: CurrentRead) {
      if (unreachable) log('config follower: redis reachable again')
      unreachable = false
      if (read === null) return
      if (read.ok === 'unchanged') {
        const { version } = read.current
        if (held !== null && version < held.version)
          note(`config follower: redis is at version ${version}, behind ${held.version}: ignored`)
        return
      }
      if (read.ok) return take(read.published)
      refusedVersion = Math.max(refusedVersion, read.version ?? 0)
      note(`config follower: refused: ${read.error.message}; keeping ${describe(held)}`)
      options.onRefused?.(read.error.message, read.version)
    },
  }
}

function describe(held: PublishedSnapshot | null): string {
  return held === null ? 'no snapshot' : `version ${held.version}`
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
