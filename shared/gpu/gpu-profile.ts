import { z } from 'zod'

/**
 * A GPU + model pair as the step-time cost model sees it (docs/vllm-wire.md §5.3). Every
 * constant of a shipped profile says where it comes from; a change to one is a change
 * to every benchmark result, so it gets its own commit.
 */
export const GpuProfile = z.strictObject({
  name: z.string(),
  gpu: z.strictObject({
    name: z.string(),
    /** Peak memory bandwidth, bytes/s (datasheet). */
    memoryBandwidth: z.number().positive(),
    /** Dense tensor peak for the linear layers' precision, FLOP/s (datasheet). */
    linearPeakFlops: z.number().positive(),
    /** Dense tensor peak for attention (BF16 even in FP8 models), FLOP/s (datasheet). */
    attentionPeakFlops: z.number().positive(),
  }),
  model: z.strictObject({
    name: z.string(),
    parameters: z.number().positive(),
    /** Bytes streamed per forward pass: the weights. */
    weightBytes: z.number().positive(),
    layers: z.int().positive(),
    /** Query heads × head dim: the width attention FLOPs scale with. */
    attentionWidth: z.int().positive(),
    kvHeads: z.int().positive(),
    headDim: z.int().positive(),
    /** Bytes per element of the KV cache (1 for FP8, 2 for BF16). */
    kvBytesPerElement: z.number().positive(),
    maxModelLen: z.int().positive(),
  }),
  /** Achieved fractions of the peaks, and the fixed per-step cost. */
  efficiency: z.strictObject({
    memoryBandwidth: z.number().gt(0).max(1),
    linear: z.number().gt(0).max(1),
    attention: z.number().gt(0).max(1),
    fixedOverheadMs: z.number().min(0),
  }),
  /** Bytes of GPU memory left for the KV cache after weights and activations. */
  kvCacheBytes: z.number().positive(),
  blockSize: z.int().positive(),
  scheduler: z.strictObject({
    maxNumBatchedTokens: z.int().positive(),
    maxNumSeqs: z.int().positive(),
  }),
  /** Relative standard deviation of step-time jitter (0 = deterministic). */
  jitter: z.number().min(0).max(0.5),
})
export type GpuProfile = z.infer<typeof GpuProfile>

const GiB = 1024 ** 3

/**
 * The reference benchmark's pods: a dense ~27B model in FP8 on one NVIDIA L40S
 * (docs/architecture.md, "The reference profile").
 * - GPU: L40S datasheet, 864 GB/s GDDR6, 733 TFLOP/s FP8 dense, 362 TFLOP/s BF16 dense
 *   (docs/vllm-wire.md §5.2).
 * - Model: 27e9 parameters, ~28 GB of FP8 weights plus BF16 embeddings, 64 layers,
 *   8 KV heads × 128; attention width 5120 (40 query heads × 128), the doc's placeholder
 *   for a 27B dense model.
 * - KV cache: FP8, 2·64·8·128·1 = 131,072 bytes/token; gpu_memory_utilization 0.9 leaves
 *   ~11.5 GiB after weights and activations, i.e. 94,208 tokens = 5,888 blocks of 16.
 * - Efficiencies: 0.8 of bandwidth, 0.55 of the FP8 GEMM peak, 0.45 of the BF16
 *   attention peak, 3 ms fixed overhead: the architecture's starting values. Fitting this
 *   very step-time function to the H200 measurements in data/calibration
 *   (`npm run sim:calibration`, R² 0.999 for both model shapes) gives 0.73–0.82 of
 *   bandwidth and 0.53–0.58 of the GEMM peak, which support the first two. Attention
 *   came out at 0.30 of peak, but that is FlashAttention-2 on Hopper, which it does not
 *   exploit; on Ampere-class SMs like the L40S's, FA2 reaches a larger fraction, so 0.45
 *   stays until an L40S measurement says otherwise. The fit's overhead (6–12 ms) is
 *   HF's eager Python, not vLLM's.
 * - Scheduler: vLLM's defaults for GPUs under 70 GiB: 2048 batched tokens, 256 sequences.
 */
export const l40s27bFp8: GpuProfile = {
  name: 'l40s-27b-fp8',
  gpu: {
    name: 'NVIDIA L40S',
    memoryBandwidth: 864e9,
    linearPeakFlops: 733e12,
    attentionPeakFlops: 362e12,
  },
  model: {
    name: 'dense-27b-fp8',
    parameters: 27e9,
    weightBytes: 28e9,
    layers: 64,
    attentionWidth: 5120,
    kvHeads: 8,
    headDim: 128,
    kvBytesPerElement: 1,
    maxModelLen: 32_768,
  },
  efficiency: { memoryBandwidth: 0.8, linear: 0.55, attention: 0.45, fixedOverheadMs: 3 },
  kvCacheBytes: 11.5 * GiB,
  blockSize: 16,
  scheduler: { maxNumBatchedTokens: 2048, maxNumSeqs: 256 },
  jitter: 0.05,
}

/**
 * Long-context pods: a dense 32B model (Qwen3-32B's shape) in FP8 with an FP8 KV cache on
 * one NVIDIA H200 SXM, 131,072 tokens of context (docs/vllm-wire.md §5.4).
 * - GPU: H200 datasheet, 141 GB HBM3e at 4.8 TB/s, 1,979 TFLOP/s FP8 dense and 989
 *   TFLOP/s BF16 dense (3,958 and 1,979 with sparsity).
 * - Model: 64 layers, hidden 5120, 64 query heads and 8 KV heads of 128, FFN 25600,
 *   vocabulary 151,936, untied head. The GEMMs are the 64 blocks' 31,206,298,624
 *   parameters (the P_body of data/calibration's qwen3-32b-shape); a step streams them in
 *   FP8 plus the BF16 lm_head (777,912,320 × 2 B), 32.76e9 bytes. The BF16 embedding table
 *   is resident but only gathered.
 * - KV cache: FP8, 2·64·8·128·1 = 131,072 bytes/token. gpu_memory_utilization 0.9 of the
 *   139.8 GiB the CUDA runtime reports for this GPU (data/calibration/summary.json) is
 *   125.8 GiB; less 34.32e9 B (31.96 GiB) of weights and embeddings and ~5 GiB of peak
 *   activations (8192-token batches, a 1024-sequence sampler warm-up), CUDA graphs and
 *   non-torch memory leaves ~88.9 GiB: 45,494 blocks of 16, ~728k tokens.
 * - Efficiencies: the ranges `npm run sim:calibration` fits on this very GPU (0.73–0.82 of
 *   bandwidth, 0.53–0.58 of the BF16 GEMM peak, 0.29–0.30 of the BF16 attention peak) give
 *   0.8, 0.55 and 0.29. Assumed: FP8 GEMMs reach the same fraction of their peak as BF16
 *   ones did. Attention is FlashAttention-2's figure; vLLM runs FlashAttention 3 on Hopper,
 *   which reaches more, so long prefills come out slow rather than fast until a vLLM
 *   measurement says otherwise. Fixed overhead 3 ms as for the L40S (vLLM's scheduler and
 *   launches, not the fit's 12 ms of HF Python). With BF16 weights this function predicts
 *   every measured 32B point within 10%
 *   (test/control-plane/lab/sim/calibration/check-profile-shape.test.ts).
 * - Scheduler: vLLM's `vllm serve` defaults for GPUs of 70 GiB or more other than the A100
 *   (EngineArgs.get_batch_defaults, docs/vllm-wire.md §5.1): 8192 batched tokens, 1024
 *   sequences.
 */
export const h200x32bFp8: GpuProfile = {
  name: 'h200-32b-fp8',
  gpu: {
    name: 'NVIDIA H200',
    memoryBandwidth: 4.8e12,
    linearPeakFlops: 1979e12,
    attentionPeakFlops: 989e12,
  },
  model: {
    name: 'qwen3-32b-fp8',
    parameters: 31_206_298_624,
    weightBytes: 31_206_298_624 + 2 * 777_912_320,
    layers: 64,
    attentionWidth: 64 * 128,
    kvHeads: 8,
    headDim: 128,
    kvBytesPerElement: 1,
    maxModelLen: 131_072,
  },
  efficiency: { memoryBandwidth: 0.8, linear: 0.55, attention: 0.29, fixedOverheadMs: 3 },
  kvCacheBytes: 0.9 * 139.8 * GiB - (31_206_298_624 + 4 * 777_912_320) - 5 * GiB,
  blockSize: 16,
  scheduler: { maxNumBatchedTokens: 8192, maxNumSeqs: 1024 },
  jitter: 0.05,
}

export const gpuProfiles: Record<string, GpuProfile> = {
  [l40s27bFp8.name]: l40s27bFp8,
  [h200x32bFp8.name]: h200x32bFp8,
}

/** KV-cache bytes one token occupies: K and V, every layer, every KV head. */
export function kvBytesPerToken(profile: GpuProfile): number {
  const { layers, kvHeads, headDim, kvBytesPerElement } = profile.model
  return 2 * layers * kvHeads * headDim * kvBytesPerElement
}

/** GPU blocks of the KV cache, as vLLM reports in vllm:cache_config_info (num_gpu_blocks). */
export function numGpuBlocks(profile: GpuProfile): number {
  return Math.floor(profile.kvCacheBytes / (kvBytesPerToken(profile) * profile.blockSize))
}
