import { afterEach } from 'vitest'
import { type Stack, startStack } from './scorer-stack.ts'

export interface ScorerStacks {
  /** A stack as `startStack` starts it, closed after the test. */
  start(options?: Parameters<typeof startStack>[0]): Promise<Stack>
  /** Closes `resource` after the test (a stack started otherwise, a pod, a socket); returns it. */
  closing<T extends { close(): unknown }>(resource: T): T
  /** Runs `cleanup` after the test. */
  defer(cleanup: () => unknown): void
}

/**
 * Call in a test file (or a describe block): the stacks and whatever else its tests open
 * are closed after each test, the last opened first.
 */
export function useScorerStacks(): ScorerStacks {
  const cleanups: (() => unknown)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })
  const closing = <T extends { close(): unknown }>(resource: T): T => {
    cleanups.push(() => resource.close())
    return resource
  }
  return {
    start: async (options) => closing(await startStack(options)),
    closing,
    defer: (cleanup) => {
      cleanups.push(cleanup)
    },
  }
}
