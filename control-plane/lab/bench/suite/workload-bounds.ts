import { type GpuProfile, numGpuBlocks } from '../../../../shared/gpu/gpu-profile.ts'
import { capacityHitCeiling } from '../bounds/capacity-hit-ceiling.ts'
import {
  type FluidThroughputBound,
  fluidThroughputBound,
} from '../bounds/fluid-throughput-bound.ts'
import { infiniteHitCeiling } from '../bounds/hit-ceiling.ts'
import { lruHitReference } from '../bounds/lru-hit-reference.ts'
import { requestStreamOf } from '../bounds/request-stream.ts'
import { type ChatFrame, chatPromptIds } from '../chat-prompt-ids.ts'
import type { Workload } from '../workload.ts'
import { zeroQueueFloor } from '../zero-queue-floor.ts'
import type { WorkloadBounds } from './rate-table.ts'

/** A workload's bounds on a pool, with what the rate grid needs from the fluid bound. */
export interface ComputedBounds extends WorkloadBounds {
  fluid: FluidThroughputBound
  /**
   * Streams that would carry the fluid bound's rate if every request took its zero-queue
   * service time (Little's law): the closed-loop grid's scale.
   */
  closedLoopStreams: number
  /** A trace's own request rate at speed 1 (requests ÷ its span); null for synthetic data. */
  traceRate: number | null
}

/**
 * Every bound of the first `count` requests of `workload` on `pods` pods of `profile`:
 * the zero-queue floor (synthetic data only: a trace's repeats across requests are not
 * what it models), the infinite-cache and capacity-constrained hit ceilings and the fluid
 * throughput bound (docs/benchmark-bounds.md).
 */
export function computeWorkloadBounds(
  workload: Workload,
  frame: ChatFrame,
  profile: GpuProfile,
  pods: number,
  count: number,
): ComputedBounds {
  const stream = chatStreamOf(workload, frame, profile, count)
  const infinite = infiniteHitCeiling(stream)
  const capacity = capacityHitCeiling(stream, pods * numGpuBlocks(profile))
  const fluid = fluidThroughputBound(stream, capacity, profile, pods)
  const stamps = workload.timestampsMs
  const span = stamps && stamps.length > 1 ? (stamps.at(-1) as number) - (stamps[0] as number) : 0
  return {
    floor: stamps ? null : zeroQueueFloor(workload, frame, profile, count),
    infiniteHitCeiling: infinite.fraction,
    capacityHitCeiling: capacity.fraction,
    lruHitReference: lruHitReference(stream, pods * numGpuBlocks(profile)).fraction,
    fluidRps: fluid.requestsPerSecond,
    fluid,
    closedLoopStreams: fluid.requestsPerSecond * fluid.meanServiceSeconds,
    traceRate: stamps && span > 0 ? ((stamps.length - 1) * 1000) / span : null,
  }
}

/**
 * The capacity-constrained hit ceiling of pods with a CPU tier `cpuMultiple` times their
 * GPU's KV blocks: the same perfect-foresight cache (capacityHitCeiling), of both tiers'
 * blocks. In the ceiling's favour again: a block in the CPU tier serves as a hit, whatever
 * its load over the host link costs.
 */
export function tieredHitCeiling(
  workload: Workload,
  frame: ChatFrame,
  profile: GpuProfile,
  pods: number,
  count: number,
  cpuMultiple: number,
): number {
  const stream = chatStreamOf(workload, frame, profile, count)
  const blocks = pods * numGpuBlocks(profile)
  return capacityHitCeiling(stream, blocks + Math.round(cpuMultiple * blocks)).fraction
}

/** The first `count` requests of `workload` as the pods see them: chat prompts in blocks. */
function chatStreamOf(workload: Workload, frame: ChatFrame, profile: GpuProfile, count: number) {
  return requestStreamOf(
    workload,
    (prefix, turns) => chatPromptIds(frame, prefix, turns),
    count,
    profile.blockSize,
  )
}
