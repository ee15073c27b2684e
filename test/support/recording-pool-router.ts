import { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import type { RoutingSpecInput } from '../../shared/crd/routing-spec.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import { createMemoryKvIndex } from '../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../shared/random/create-seeded-random.ts'
import { PoolRouter } from '../../shared/routing/pool-router.ts'

/** A speculative entry as the pool wrote it: its pod, when, and until when. */
export interface SpeculativeWrite {
  pod: string
  atMs: number
  expiresAtMs: number
}

/** A pool's spec on the default GPU profile with one model `m`, routed as `routing` says. */
export const poolSpec = (routing: RoutingSpecInput) =>
  InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    gpuProfile: 'l40s-27b-fp8',
    routing,
  })

/**
 * A pool router over ready pods `pods` and an in-memory index that records every
 * speculative entry written, with a clock the test sets.
 */
export function recordingPoolRouter(routing: RoutingSpecInput, pods = ['a', 'b']) {
  const writes: SpeculativeWrite[] = []
  let nowMs = 0
  const memory = createMemoryKvIndex()
  const index: KvIndex = {
    ...memory,
    addSpeculative: (pod, chain, blocks, expiresAtMs) => {
      writes.push({ pod, atMs: nowMs, expiresAtMs })
      return memory.addSpeculative(pod, chain, blocks, expiresAtMs)
    },
  }
  const router = new PoolRouter({
    name: 'p',
    spec: poolSpec(routing),
    index,
    random: createSeededRandom(1),
    indexNowMs: () => nowMs,
    onError: (message) => {
      throw new Error(message)
    },
  })
  for (const name of pods) {
    router.addPod(name, 0)
    router.setIndexReady(name, true)
  }
  const setNow = (ms: number) => {
    nowMs = ms
  }
  return { router, writes, setNow, now: () => nowMs }
}
