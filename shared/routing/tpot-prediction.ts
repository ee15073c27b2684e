import type { PodCandidate, RoutingRequest } from './routing-strategy.ts'

/**
 * The time per output token `request` would see on `pod`: the pool's fitted decode step
 * (OnlineStepCost, in PodMemory.stepMs with the batch the pod decodes now) plus what its
 * own context and the contexts of the requests waiting for their first token there add to
 * every step (those count at this request's length, as remainingDecodeSteps counts them).
 * It is the step the request starts with: later arrivals are judged against their own
 * objectives, which is what keeps it. Null without a memory view (capacity unknown).
 */
export function predictTpotMs(request: RoutingRequest, pod: PodCandidate): number | null {
  const memory = pod.memory
  if (!memory) return null
  const ownContext = request.promptTokens + request.maxTokens / 2
  const joining = 1 + pod.load.pendingRequests + (pod.metrics?.unseenWaiting ?? 0)
  return memory.stepMs + memory.msPerContextToken * ownContext * joining
}
