import type { BlockKeyChain } from '../kv-index/block-keys.ts'

/** How far a pod's index entries can be believed (verified against reported cached tokens). */
export type IndexTrust = 'precise' | 'approximate' | 'load-only'

/** What this scorer replica itself sent to a pod and has not seen finish. */
export interface PodLoad {
  /** Requests sent and not finished. */
  inFlight: number
  /** Of those, requests not yet answered by a first token (queued or prefilling). */
  pendingRequests: number
  /** Uncached prompt tokens of requests sent and not yet answered by a first token. */
  pendingPrefillTokens: number
  /** Tokens (prompt + generated so far) of the requests in flight: their KV footprint. */
  activeTokens: number
}

/** The pod's own view, scraped from /metrics; null when missing or stale. */
export interface PodMetricsView {
  running: number
  waiting: number
  kvCacheUsage: number
  ageMs: number
  /**
   * Waiting requests this replica did not have pending when the metrics were read:
   * other replicas' traffic, or requests the pod preempted. Null before the router
   * could tell (a view built without its bookkeeping).
   */
  unseenWaiting?: number
  /**
   * Requests, running or waiting, the pod reported beyond this replica's own in flight
   * there when the metrics were read: other replicas' traffic (0 when it is the only
   * sender; its own preempted requests wait there too, but it counts them). Null as above.
   */
  foreignRequests?: number
}

/** What one decode step of a pod costs: a base, plus KV reads per token of the batch's context. */
export interface StepCost {
  decodeStepMs: number
  msPerContextToken: number
}

/** Kinference's per-pod TTFT model: overhead plus time per token of queued prefill work. */
export interface TtftModel {
  overheadMs: number
  msPerToken: number
}

/** What PoolRouter.restore takes: a pod's state as a replica's report gave it. */
export interface RestoredPodView {
  healthy: boolean
  trust: IndexTrust
  drift: number
  observations: number
  ttft: TtftModel & { observations: number }
}

/**
 * A pod's KV memory as the router sees it. vLLM admits a waiting request only when the
 * blocks for its uncached tokens are free (cached blocks nobody references count as
 * free); when they are not, the request waits for running ones to finish, however little
 * prefill it needs. That wait, not prefill, is what a loaded pod's queue is made of. Built
 * by memoryOutlook (pod-memory.ts).
 */
export interface PodMemory {
  /** KV-cache tokens of the pod (num_gpu_blocks × block_size). */
  capacityTokens: number
  /** Tokens referenced by running requests, plus those sent since the pod last said. */
  usedTokens: number
  /** Uncached tokens of requests sent and not yet answered, which come first (FCFS). */
  pendingTokens: number
  /** Time of one decode step on the pod now (its batch's KV reads included). */
  stepMs: number
  /** What each token of context its running requests hold adds to every step (KV read). */
  msPerContextToken: number
  /**
   * Requests decoding on the pod, as [steps left, tokens they free], soonest first; steps
   * left assume they run to max_tokens (an upper bound: a stop ends them sooner). A
   * function: only a pod short of memory needs it.
   */
  releases(): readonly (readonly [steps: number, tokens: number])[]
}

export interface PodCandidate {
  name: string
  /** Leading blocks of this request the pod holds, per the index, already discounted by trust. */
  cachedBlocks: number
  /**
   * Per medium other than the GPU ("CPU" for vLLM's OffloadingConnector), the blocks of this
   * request the pod holds there continuing its GPU hit (from block `cachedBlocks` on, up to
   * the first the medium lacks), discounted by trust as cachedBlocks. Absent when the pool
   * keeps no tier holdings or the pod holds none of the request there (tier-lookup.ts).
   */
  tierBlocks?: Readonly<Record<string, number>>
  trust: IndexTrust
  load: PodLoad
  metrics: PodMetricsView | null
  ttft: TtftModel
  /** Its KV memory and when it frees up; null when the pod's capacity is unknown. */
  memory: PodMemory | null
  /** Relative share of traffic for weighted choices (worker-set weight; 100 by default). */
  weight: number
}

export interface RoutingRequest {
  id: string
  model: string
  promptTokens: number
  blockSize: number
  /**
   * What the character-based peers hash: the JSON of the messages for chat, the prompt for
   * completions, as GIE's approximate prefix and SGLang's HTTP router see a request.
   */
  promptText: string
  maxTokens: number
  /**
   * The prompt's full blocks as the index keys them (the chain the lookup used): what
   * strategies that track which blocks are active on a pod (Dynamo's) compare.
   */
  blockKeys: BlockKeyChain
}

export interface PodScore {
  pod: string
  cachedTokens: number
  /** Kinference's prediction, when the strategy makes one. */
  predictedTtftMs: number | null
  /** The strategy's own score or cost, for explanation. */
  score: number | null
}

export interface RoutingDecision {
  /** null when no candidate can take the request. */
  pod: string | null
  /** Why, in words a person reads in the decision header and the trace. */
  reason: string
  scores: PodScore[]
}

export interface RoutingContext {
  nowMs: number
  /** Uniform [0,1): tie-breaks and exploration, seeded in simulations. */
  random: () => number
}

/**
 * A routing algorithm: ours (kinference) or a peer's, implemented from its published
 * description so all of them run on identical inputs. Pure apart from its own state
 * (approximate prefix indexes, round-robin position), which the hooks update.
 */
export interface RoutingStrategy {
  /** Its name in the strategy registry, as a pool's routing.strategy names it. */
  readonly name: string
  /** It hashes the request's characters (RoutingRequest.promptText), which then must be filled in. */
  readonly usesPromptText?: boolean
  /**
   * false: the pool writes no speculative entries for the requests it sends (a peer that
   * does not predict its own routing into its index as deployed, e.g. Dynamo without
   * router_predicted_ttl_secs). Absent or true: a routed request's blocks count as cached on
   * its pod for kinference's speculativeTtlMs, until the pod's KV events confirm them.
   */
  readonly speculativeEntries?: boolean
  choose(
    request: RoutingRequest,
    candidates: readonly PodCandidate[],
    context: RoutingContext,
  ): RoutingDecision
  /**
   * The request was sent to `pod`, which `candidate` described when it was chosen
   * (strategies that learn prefixes from their own decisions, or track their own load).
   */
  onRouted?(
    request: RoutingRequest,
    pod: string,
    context: RoutingContext,
    candidate: PodCandidate,
  ): void
  /** The routed request's first token arrived: its prefill is done. */
  onFirstToken?(id: string): void
  /** The routed request finished or failed: nothing of it is active on its pod any more. */
  onReleased?(id: string): void
  /** The pod left the pool; the requests in flight there are forgotten without a release. */
  onPodRemoved?(pod: string): void
}
