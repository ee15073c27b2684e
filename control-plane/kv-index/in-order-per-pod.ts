import type { PodId } from '../../shared/kv-index/kv-index.ts'

export interface InOrderPerPod {
  /** Runs `work` after every earlier call for the same pod (a failure does not block the next). */
  run<T>(pod: PodId, work: () => Promise<T>): Promise<T>
  /** Resolves once every call made so far has settled. */
  settled(): Promise<void>
}

/**
 * One queue per pod, forgotten once empty: a Redis store's applies and drops for a pod must
 * reach Redis in the order the pod's feed made them, while other pods' calls run beside them.
 */
export function createInOrderPerPod(): InOrderPerPod {
  const tails = new Map<PodId, Promise<unknown>>()
  return {
    run(pod, work) {
      const run = (tails.get(pod) ?? Promise.resolve()).then(work)
      const tail = run.catch(() => undefined)
      tails.set(pod, tail)
      void tail.then(() => {
        if (tails.get(pod) === tail) tails.delete(pod)
      })
      return run
    },
    async settled() {
      await Promise.all(tails.values())
    },
  }
}
