import type { PodCandidate, RoutingRequest } from '../routing-strategy.ts'
import {
  APPROXIMATE_LRU_CAPACITY_PER_SERVER,
  APPROXIMATE_MAX_PREFIX_BLOCKS_TO_MATCH,
  autoTunedCapacity,
  createApproximatePrefixIndex,
} from './create-approximate-prefix-index.ts'
import { hashPromptBlocks } from './hash-prompt-blocks.ts'

/** A request's prefix match: the prompt's character blocks, and how many each pod holds. */
export interface ApproximateMatch {
  blocks: number
  matched: ReadonlyMap<string, number>
}

/**
 * The approximate prefix producer with its shipped defaults (GIE `P/requestcontrol/
 * dataproducer/approximateprefix/{types,plugin}.go`, which llm-d's EPP took over): the
 * prompt's character blocks (at most 256) matched against one LRU per pod, learnt from the
 * router's own decisions, each LRU sized from the pod's num_gpu_blocks (`autoTune`).
 */
export interface ApproximatePrefixProducer {
  /** Matches the request, and keeps its hashes for `routed`. */
  match(request: RoutingRequest): ApproximateMatch
  /** The request went to `candidate`'s pod: its blocks become that pod's newest. */
  routed(request: RoutingRequest, candidate: PodCandidate): void
  removePod(pod: string): void
}

/** The producer's knobs (GIE's gieDefault block sets them; llm-d ships the defaults). */
export interface ApproximatePrefixProducerOptions {
  /** Blocks per pod's LRU when `autoTune` is off or the pod's capacity is unknown. */
  lruCapacityPerServer: number
  /** Character blocks of the prompt matched, at most. */
  maxPrefixBlocksToMatch: number
  /** Size each pod's LRU from its num_gpu_blocks. */
  autoTune: boolean
}

const shippedDefaults: ApproximatePrefixProducerOptions = {
  lruCapacityPerServer: APPROXIMATE_LRU_CAPACITY_PER_SERVER,
  maxPrefixBlocksToMatch: APPROXIMATE_MAX_PREFIX_BLOCKS_TO_MATCH,
  autoTune: true,
}

/** The producer forgets a request's hashes once routed; this bounds a lost one. */
const maxPendingRequests = 1024

export function createApproximatePrefixProducer(
  options: ApproximatePrefixProducerOptions = shippedDefaults,
): ApproximatePrefixProducer {
  const index = createApproximatePrefixIndex(options.lruCapacityPerServer)
  // The hashes computed for matching, reused when the decision is recorded.
  const pendingHashes = new Map<string, number[]>()

  function hashesOf(request: RoutingRequest): number[] {
    return hashPromptBlocks(
      request.promptText,
      request.model,
      request.blockSize,
      options.maxPrefixBlocksToMatch,
    )
  }

  return {
    match(request) {
      const hashes = hashesOf(request)
      if (pendingHashes.size >= maxPendingRequests) {
        pendingHashes.delete(pendingHashes.keys().next().value as string)
      }
      pendingHashes.set(request.id, hashes)
      return { blocks: hashes.length, matched: index.match(hashes) }
    },
    routed(request, candidate) {
      const hashes = pendingHashes.get(request.id) ?? hashesOf(request)
      pendingHashes.delete(request.id)
      const tuned = options.autoTune ? autoTunedCapacity(candidate, request.blockSize) : null
      index.add(candidate.name, hashes, tuned ?? options.lruCapacityPerServer)
    },
    removePod(pod) {
      index.removePod(pod)
    },
  }
}
