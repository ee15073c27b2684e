import { type GpuProfile, kvBytesPerToken } from './gpu-profile.ts'

/** What one engine step computes, as the cost model needs it. */
export interface StepShape {
  /** Tokens in the forward pass: prefill chunks plus one per decode. */
  tokens: number
  /** Σ over decoding requests of their context length (KV read per decode). */
  decodeContext: number
  /** Σ over prefill chunks of (prefix already computed + chunk) (KV read and written). */
  prefillContext: number
  /** Σ over prefill chunks of chunk·(prefix + chunk/2): the causal attention area. */
  prefillAttention: number
}

export const emptyStepShape = (): StepShape => ({
  tokens: 0,
  decodeContext: 0,
  prefillContext: 0,
  prefillAttention: 0,
})

/** The step-time terms in seconds per unit, precomputed once per profile. */
export interface StepCostModel {
  profile: GpuProfile
  /** Milliseconds for one step of this shape, before jitter. */
  stepMs(shape: StepShape): number
}

/**
 * Roofline step time (docs/vllm-wire.md §5.3):
 *   t = c0 + max(W/BW, 2·N·T/F_lin) + kvb·(Σ_dec ctx + Σ_pre (p+c))/BW + 4·L·Hq·d·Σ_pre c·(p+c/2)/F_attn
 * Weights are streamed once per step whatever the batch (memory-bound below ~300 tokens),
 * GEMMs take over above; every running request's KV is read; prefill attention is
 * quadratic in the chunk and linear in its prefix, which is why cached tokens are not
 * free (data/calibration: +45% at u=2048 with an 8k prefix).
 */
export function createStepCostModel(profile: GpuProfile): StepCostModel {
  const { gpu, model, efficiency } = profile
  const bandwidth = gpu.memoryBandwidth * efficiency.memoryBandwidth
  const weightSeconds = model.weightBytes / bandwidth
  const linearSecondsPerToken = (2 * model.parameters) / (gpu.linearPeakFlops * efficiency.linear)
  const kvSecondsPerToken = kvBytesPerToken(profile) / bandwidth
  const attentionSecondsPerUnit =
    (4 * model.layers * model.attentionWidth) / (gpu.attentionPeakFlops * efficiency.attention)
  const fixedSeconds = efficiency.fixedOverheadMs / 1000
  return {
    profile,
    stepMs(shape) {
      const seconds =
        fixedSeconds +
        Math.max(weightSeconds, linearSecondsPerToken * shape.tokens) +
        kvSecondsPerToken * (shape.decodeContext + shape.prefillContext) +
        attentionSecondsPerUnit * shape.prefillAttention
      return seconds * 1000
    },
  }
}
