import type { z } from 'zod'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { type RoutingSpec, RoutingStrategyName } from '../../../shared/crd/routing-strategy.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'

/** The model name benchmark pools serve (simulated pods answer to any name they are given). */
export const benchModel = 'qwen3.8-27b-fp8'

/** Benchmark routers that are a strategy with one of its published options, not its default. */
const aliases = {
  'dynamo-lmetric': { strategy: 'dynamo', dynamo: { selectionPolicy: 'lmetric' } },
} as const satisfies Record<string, z.input<typeof RoutingSpec>>

/**
 * Every router a benchmark can run: each strategy with its defaults, a variant right after its
 * strategy, the baselines first and kinference last (the order of the reports' rows).
 */
export const benchRouterNames: readonly string[] = [
  ...RoutingStrategyName.options
    .filter((name) => name !== 'kinference')
    .flatMap((name) => [
      name,
      ...Object.entries(aliases).flatMap(([alias, spec]) =>
        spec.strategy === name ? [alias] : [],
      ),
    ]),
  'kinference',
]

function routingOf(router: string): z.input<typeof RoutingSpec> {
  const alias = (aliases as Record<string, z.input<typeof RoutingSpec>>)[router]
  if (alias) return alias
  const strategy = RoutingStrategyName.safeParse(router)
  if (!strategy.success) {
    throw new KinfError(
      'invalid_request',
      `unknown router "${router}": ${benchRouterNames.join(', ')}`,
    )
  }
  return { strategy: strategy.data }
}

/**
 * The pool every benchmark routes over: the strategy under test with its published
 * defaults (or, for an alias, the one option it names) and the GPU profile's pods, nothing
 * tuned for the workload.
 */
export function benchPoolSpec(router: string, gpuProfile: string): InferencePoolSpec {
  return InferencePoolSpec.parse({
    selector: { matchLabels: { app: 'bench' } },
    targetPort: 8000,
    models: [
      {
        name: benchModel,
        tokenizer: 'qwen3',
        // The pods' context: a trace's long requests on h200-32b-fp8 fit its 131k.
        maxContextTokens: gpuProfiles[gpuProfile]?.model.maxModelLen ?? 32_768,
      },
    ],
    gpuProfile,
    routing: routingOf(router),
  })
}
