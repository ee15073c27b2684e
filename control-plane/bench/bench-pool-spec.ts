import { InferencePoolSpec } from '../../shared/crd/inference-pool.ts'
import { RoutingStrategyName } from '../../shared/crd/routing-strategy.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'

/** The model name benchmark pools serve (simulated pods answer to any name they are given). */
export const benchModel = 'qwen3.8-27b-fp8'

/**
 * The pool every benchmark routes over: the strategy under test with its published
 * defaults and the GPU profile's pods, nothing tuned for the workload.
 */
export function benchPoolSpec(router: string, gpuProfile: string): InferencePoolSpec {
  const strategy = RoutingStrategyName.safeParse(router)
  if (!strategy.success) {
    throw new KinfError(
      'invalid_request',
      `unknown router "${router}": ${RoutingStrategyName.options.join(', ')}`,
    )
  }
  return InferencePoolSpec.parse({
    selector: { matchLabels: { app: 'bench' } },
    targetPort: 8000,
    models: [{ name: benchModel, tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    gpuProfile,
    routing: { strategy: strategy.data },
  })
}
