import { afterAll, afterEach, beforeAll } from 'vitest'
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

/**
 * Call in a test file (or a describe block): one stack for all its tests, started before the
 * first (given a minute) and closed after the last. The stack answered stands for it: its
 * pods and scorer are the running stack's, read during the tests.
 */
export function useSharedStack(options?: Parameters<typeof startStack>[0]): Stack {
  let started: Stack | undefined
  beforeAll(async () => {
    started = await startStack(options)
  }, 60_000)
  afterAll(async () => {
    await started?.close()
    started = undefined
  })
  const current = () => {
    if (!started) throw new Error('the shared stack runs only while its tests do')
    return started
  }
  return {
    get pods() {
      return current().pods
    },
    get scorer() {
      return current().scorer
    },
    close: () => current().close(),
  }
}
