import {
  type InferencePoolSpec,
  inferencePoolSpecSchema,
} from '../../../shared/crd/inference-pool.ts'
import type { RoutingSpecInput } from '../../../shared/crd/routing-spec.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { gpuProfiles } from '../../../shared/gpu/gpu-profile.ts'
import type { StrategyRegistry } from '../../../shared/routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../../../shared/routing/strategies/strategy-registry.ts'

/** The model name benchmark pools serve (simulated pods answer to any name they are given). */
export const benchModel = 'qwen3.8-27b-fp8'

/**
 * Every router a benchmark can run, by name: each strategy with its defaults, and each of its
 * variants (a published option, not its default) right after it; the registry's default
 * strategy (kinference) comes last, after the baselines (the order of the reports' rows).
 */
export function benchRoutersOf(strategies: StrategyRegistry): Map<string, RoutingSpecInput> {
  const [ours, ...baselines] = strategies
  const routers = new Map<string, RoutingSpecInput>()
  for (const strategy of [...baselines, ...(ours ? [ours] : [])]) {
    routers.set(strategy.name, { strategy: strategy.name })
    const block = strategy.parameters?.block
    if (block === undefined) continue
    for (const [variant, parameters] of Object.entries(strategy.variants ?? {}))
      routers.set(variant, { strategy: strategy.name, [block]: parameters })
  }
  return routers
}

/** The built-in strategies' routers, in the reports' order. */
export const benchRouterNames: readonly string[] = [...benchRoutersOf(builtinStrategies).keys()]

function routingOf(router: string, strategies: StrategyRegistry): RoutingSpecInput {
  const routers = benchRoutersOf(strategies)
  const routing = routers.get(router)
  if (routing === undefined) {
    throw new KinfError(
      'invalid_request',
      `unknown router "${router}": ${[...routers.keys()].join(', ')}`,
    )
  }
  return routing
}

/**
 * The pool every benchmark routes over: the strategy under test with its published
 * defaults (or, for a variant, the options it names) and the GPU profile's pods, nothing
 * tuned for the workload. A registry of one's own makes its strategies routers too.
 */
export function benchPoolSpec(
  router: string,
  gpuProfile: string,
  strategies: StrategyRegistry = builtinStrategies,
): InferencePoolSpec {
  return inferencePoolSpecSchema(strategies).parse({
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
    routing: routingOf(router, strategies),
  })
}
