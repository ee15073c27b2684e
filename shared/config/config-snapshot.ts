import { z } from 'zod'
import { GatewayBackendSpec, type Locality } from '../crd/gateway-backend.ts'
import { InferencePolicySpec, inferencePolicySpecSchema } from '../crd/inference-policy.ts'
import { InferencePoolSpec, inferencePoolSpecSchema } from '../crd/inference-pool.ts'
import { InferenceProviderSpec } from '../crd/inference-provider.ts'
import { InferenceWorkerSetSpec } from '../crd/inference-worker-set.ts'
import { ResourceName } from '../crd/object-meta.ts'
import type { Plugins } from '../plugins.ts'
import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import type { StrategyRegistry } from '../routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../routing/strategies/strategy-registry.ts'
import { PoolEndpoint } from './pool-endpoint.ts'

const ResourceId = z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/, 'must be namespace/name')

/** A resource as the snapshot carries it: identity plus its spec with defaults applied. */
function entry<Spec extends z.ZodType>(spec: Spec) {
  return z.strictObject({ namespace: ResourceName, name: ResourceName, spec })
}

export const SnapshotPool = entry(InferencePoolSpec)
export type SnapshotPool = z.infer<typeof SnapshotPool>
export const SnapshotWorkerSet = entry(InferenceWorkerSetSpec)
export type SnapshotWorkerSet = z.infer<typeof SnapshotWorkerSet>
export const SnapshotProvider = entry(InferenceProviderSpec)
export type SnapshotProvider = z.infer<typeof SnapshotProvider>
export const SnapshotBackend = entry(GatewayBackendSpec).extend({
  locality: z.enum(['InCluster', 'External']) satisfies z.ZodType<Locality>,
})
export type SnapshotBackend = z.infer<typeof SnapshotBackend>
export const SnapshotPolicy = entry(InferencePolicySpec)
export type SnapshotPolicy = z.infer<typeof SnapshotPolicy>

export const snapshotSchemaVersion = 2

/**
 * The runtime configuration the edge and the scorer load: every resource keyed by
 * `namespace/name`, all references checked, defaults applied. References inside specs
 * stay names, resolved in the namespace of the resource that holds them. Immutable and
 * identified by the SHA-256 of its content. Its policies' rules hold the conditions of
 * the registry, its pools' routing the strategies of theirs.
 */
export function configSnapshotSchema<const Conditions extends ConditionRegistry>(
  conditions: Conditions,
  strategies: StrategyRegistry = builtinStrategies,
) {
  const pool =
    strategies === builtinStrategies ? SnapshotPool : entry(inferencePoolSpecSchema(strategies))
  return z.strictObject({
    kind: z.literal('KinferenceConfigSnapshot'),
    schemaVersion: z.literal(snapshotSchemaVersion),
    hash: z.string().regex(/^sha256:[a-f0-9]{64}$/),
    pools: z.record(ResourceId, pool),
    workerSets: z.record(ResourceId, SnapshotWorkerSet),
    providers: z.record(ResourceId, SnapshotProvider),
    backends: z.record(ResourceId, SnapshotBackend),
    policies: z.record(ResourceId, entry(inferencePolicySpecSchema(conditions))),
    /** Ready endpoints of each pool (by pool id), resolved from Pods and EndpointSlices. */
    endpoints: z.record(ResourceId, z.array(PoolEndpoint)),
    /** Tenant name to the id of the policy that governs it. */
    tenants: z.record(ResourceName, ResourceId),
  })
}

export const ConfigSnapshot = configSnapshotSchema(builtinConditions)
export type ConfigSnapshot = z.infer<typeof ConfigSnapshot>
export type ConfigSnapshotContent = Omit<ConfigSnapshot, 'hash'>

/**
 * The snapshot schema of the plugins; the built-in one's is built once, when the module
 * loads, another's each call (so callers build it once and keep it). Typed as the built-in
 * snapshot: rules may hold more match fields, pools other strategies' blocks, which only
 * the plugins' own conditions and strategies read.
 */
export function snapshotSchemaOf({ conditions, strategies }: Plugins): z.ZodType<ConfigSnapshot> {
  return conditions === builtinConditions && strategies === builtinStrategies
    ? ConfigSnapshot
    : (configSnapshotSchema(conditions, strategies) as z.ZodType<ConfigSnapshot>)
}
