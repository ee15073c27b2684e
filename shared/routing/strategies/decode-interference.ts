import type { PodCandidate, RoutingRequest } from '../routing-strategy.ts'

/**
 * Decode steps the pod's requests in flight still have ahead (to max_tokens, an upper
 * bound), the ones not yet started counted at this request's length: the decode batch this
 * request would share for its lifetime, and the KV those answers will still take. The KV
 * in use now says how long the running requests are, not how long they will stay; a pod
 * of fresh long answers looks light by it. This replica tracks only its own requests; the
 * pod's metrics say how many run and wait in all, so its own are scaled up to them (other
 * replicas' traffic looks like its own). Without a memory view, the KV footprint in flight.
 */
export function remainingDecodeSteps(pod: PodCandidate, ownMaxTokens: number): number {
  if (!pod.memory) return pod.load.activeTokens
  const releases = pod.memory.releases()
  let own = 0
  for (const [left] of releases) own += left
  const running = pod.metrics?.running ?? releases.length
  const scale = releases.length > 0 ? Math.max(1, running / releases.length) : 1
  const waiting = pod.load.pendingRequests + (pod.metrics?.unseenWaiting ?? 0)
  const others = releases.length === 0 ? Math.max(0, running) * ownMaxTokens : 0
  return waiting * ownMaxTokens + own * scale + others
}

/**
 * What joining this pod's batch costs in decoding, where pods differ: every step reads the
 * KV of every running request, so the request's own steps are slowed by the context the
 * pod holds, and the steps it shares with the running requests (as many as each has left,
 * up to its own length) are slowed by its context. Summed, like the TTFT terms, as time
 * added to requests' latencies. A pod crowded with long contexts then loses work it could
 * hand to another for a little more prefill, which is how Dynamo's decode-block term
 * keeps end-to-end latency down on mixed loads (docs/peer-routers.md).
 */
export function decodeInterferenceMs(
  request: RoutingRequest,
  pod: PodCandidate,
  decoding: number,
  othersSteps: number,
): number {
  if (!pod.memory) return 0
  const perToken = pod.memory.msPerContextToken
  const batchContext = pod.memory.usedTokens + pod.memory.pendingTokens
  const ownContext = request.promptTokens + request.maxTokens / 2
  const shared = Math.min(othersSteps, decoding * request.maxTokens)
  return perToken * (request.maxTokens * batchContext + ownContext * shared)
}
