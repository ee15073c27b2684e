import type { PodLoad, PodMemory, StepCost } from './routing-strategy.ts'

/** What the memory outlook reads of a request in flight on the pod. */
export interface RequestInFlight {
  uncachedTokens: number
  /** Tokens loaded from the CPU tier: they hold GPU blocks like computed ones (absent: none). */
  loadedTokens?: number
  generated: number
  maxTokens: number
  firstTokenAtMs: number | null
}

/**
 * A pod's memory as one router replica sees it: used tokens from the pod's last
 * kv_cache_usage plus what this replica sent and saw freed since, or, without metrics,
 * what it has in flight there; requests past their first token free their blocks after
 * their remaining steps.
 */
export function memoryOutlook(input: {
  capacityTokens: number
  /** The pod's last reported usage and the tokens written (+) and freed (−) since. */
  reported: { usage: number; since: number } | null
  requests: Iterable<RequestInFlight>
  load: PodLoad
  /** Context of the requests past their first token: what every decode step reads. */
  decodingTokens: number
  stepCost: StepCost
}): PodMemory {
  const { capacityTokens, reported, requests, load, decodingTokens, stepCost } = input
  let used = reported ? reported.usage * capacityTokens + reported.since : 0
  if (!reported)
    for (const request of requests)
      used += request.uncachedTokens + (request.loadedTokens ?? 0) + request.generated
  let releases: [number, number][] | null = null
  return {
    capacityTokens,
    usedTokens: Math.max(0, used),
    pendingTokens: load.pendingPrefillTokens,
    stepMs: stepCost.decodeStepMs + stepCost.msPerContextToken * decodingTokens,
    msPerContextToken: stepCost.msPerContextToken,
    releases: () => {
      if (releases) return releases
      releases = []
      for (const request of requests) {
        if (request.firstTokenAtMs === null) continue
        const held = request.uncachedTokens + (request.loadedTokens ?? 0) + request.generated
        releases.push([Math.max(1, request.maxTokens - request.generated), held])
      }
      return releases.sort((a, b) => a[0] - b[0])
    },
  }
}

/**
 * How long a request needing `needTokens` new blocks waits for memory on the pod: zero
 * when they are free after the requests ahead; otherwise the time until enough running
 * requests finish, soonest first. Past everything tracked, the shortfall is assumed to
 * free at the pace of the last release (other replicas' traffic, longer answers).
 */
export function admissionWaitMs(memory: PodMemory, needTokens: number): number {
  const deficit = memory.usedTokens + memory.pendingTokens + needTokens - memory.capacityTokens
  if (deficit <= 0) return 0
  const releases = memory.releases()
  let freed = 0
  let steps = 0
  for (const [after, tokens] of releases) {
    freed += tokens
    steps = after
    if (freed >= deficit) return steps * memory.stepMs
  }
  // Not enough tracked: extrapolate at the average rate seen so far (or one answer's
  // worth per deficit when nothing is tracked).
  const perStep = steps > 0 && freed > 0 ? freed / steps : 0
  const more = perStep > 0 ? (deficit - freed) / perStep : 256
  return (steps + more) * memory.stepMs
}
