import { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import type { PoolLookup, RoutingRequest } from '../../shared/routing/pool-router.ts'

/**
 * A pool of model `m` whose pods' KV holds 256 blocks of 16 tokens (4,096): one
 * 3,000-token prompt fits, a second cannot start beside it. The admission tests hold
 * requests on it.
 */
export const onePodSpec = InferencePoolSpec.parse({
  selector: { matchLabels: {} },
  targetPort: 8000,
  models: [{ name: 'm', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
  gpuProfile: 'l40s-27b-fp8',
  scheduler: { numGpuBlocks: 256 },
})

/** A request of `promptTokens` (3,000 by default) and 16 output tokens, without block keys. */
export const heldRequest = (id: string, promptTokens = 3_000): RoutingRequest => ({
  id,
  model: 'm',
  promptTokens,
  blockSize: 16,
  promptText: '',
  maxTokens: 16,
  blockKeys: new Uint32Array(0),
})

/** Its lookup on a pool of one pod `a` holding none of it, for `tenant` when given. */
export const heldLookup = (id: string, tenant?: string): PoolLookup => ({
  request: {
    routing: heldRequest(id),
    keys: new Uint32Array(0),
    ...(tenant !== undefined ? { tenant } : {}),
  },
  blocks: new Map([['a', 0]]),
})
