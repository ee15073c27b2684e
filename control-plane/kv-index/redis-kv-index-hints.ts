import type { PodId } from '../../shared/kv-index/kv-index.ts'

/**
 * This replica's memory of each pod's engine hash → block key (16 hex digits), so chaining a
 * BlockStored event onto its parent needs no read from Redis in the common case. Only a
 * hint: the apply script checks that the parent still maps to the key it was chained on,
 * so a stale hint (another replica removed or cleared it) costs a cold block, never a
 * wrong one. Bounded: oldest hash first per pod, least recently used pod first.
 */
export class RedisKvIndexHints {
  private readonly pods = new Map<PodId, Map<bigint, string>>()
  private readonly maxPerPod: number
  private readonly maxPods: number

  constructor(maxPerPod: number, maxPods: number) {
    this.maxPerPod = maxPerPod
    this.maxPods = maxPods
  }

  /** The pod's hints, marked most recently used (created empty when absent). */
  forPod(pod: PodId): Map<bigint, string> {
    let hints = this.pods.get(pod)
    if (hints !== undefined) this.pods.delete(pod)
    else hints = new Map()
    this.pods.set(pod, hints)
    if (this.pods.size > this.maxPods) this.pods.delete(this.pods.keys().next().value as PodId)
    return hints
  }

  set(hints: Map<bigint, string>, hash: bigint, key: string): void {
    hints.delete(hash)
    hints.set(hash, key)
    if (hints.size > this.maxPerPod) hints.delete(hints.keys().next().value as bigint)
  }

  dropPod(pod: PodId): void {
    this.pods.delete(pod)
  }

  clear(): void {
    this.pods.clear()
  }
}
