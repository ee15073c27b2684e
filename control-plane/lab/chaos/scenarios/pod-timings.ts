import type { ChaosPod } from '../chaos-parts.ts'

/**
 * Collects each pod's own wall-clock time to first token by request id (the simulated
 * pod's POST /admin/timings/take), taken every `everyMs` so the pods keep few.
 */
export function collectPodTimings(pods: readonly ChaosPod[], everyMs: number) {
  const ttftById = new Map<string, number>()
  const takeAll = async () => {
    await Promise.all(
      pods.map(async (pod) => {
        const response = await fetch(`${pod.url}/admin/timings/take`, {
          method: 'POST',
          signal: AbortSignal.timeout(10_000),
        }).catch(() => null)
        if (!response?.ok) return
        const { timings } = (await response.json()) as {
          timings: { requestId: string; ttftMs: number }[]
        }
        for (const timing of timings) ttftById.set(timing.requestId, timing.ttftMs)
      }),
    )
  }
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, everyMs))
      await takeAll()
    }
  })()
  return {
    /** Stops collecting, takes what is left, and returns every timing seen. */
    async stop(): Promise<Map<string, number>> {
      stopped = true
      await loop
      await takeAll()
      return ttftById
    },
  }
}
