import { describe, expect, it } from 'vitest'
import { benchPresets } from '../../../../../control-plane/lab/bench/bench-presets.ts'
import { createChatFrame } from '../../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { createBenchWorkload } from '../../../../../control-plane/lab/bench/create-bench-workload.ts'
import {
  computeWorkloadBounds,
  tieredHitCeiling,
} from '../../../../../control-plane/lab/bench/suite/workload-bounds.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'
import {
  type GpuProfile,
  kvBytesPerToken,
  l40s27bFp8,
} from '../../../../../shared/gpu/gpu-profile.ts'

// A GPU whose KV holds 1,024 blocks of 16 tokens: four of shared-prefix's 32 prefixes.
const small: GpuProfile = {
  ...l40s27bFp8,
  kvCacheBytes: 1_024 * l40s27bFp8.blockSize * kvBytesPerToken(l40s27bFp8),
}

describe('the tiered capacity hit ceiling', () => {
  it('is the GPU ceiling without a tier, and higher with one where the prefixes overflow the GPUs', async () => {
    const assets = loadSimModelAssets()
    const frame = createChatFrame(assets.tokenizer)
    const count = 600
    const workload = await createBenchWorkload(
      (benchPresets['shared-prefix'] as { data: string }).data,
      {
        seed: 42,
        vocabulary: assets.vocabulary,
        frame,
        maxModelLen: small.model.maxModelLen,
        maxRequests: count,
      },
    )
    const gpu = computeWorkloadBounds(workload, frame, small, 1, count).capacityHitCeiling
    expect(tieredHitCeiling(workload, frame, small, 1, count, 0)).toBeCloseTo(gpu ?? 0, 12)
    const tiered = tieredHitCeiling(workload, frame, small, 1, count, 4)
    expect(tiered).toBeGreaterThan(gpu ?? 1)
    expect(tiered).toBeLessThanOrEqual(1)
  })
})
