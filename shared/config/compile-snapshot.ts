import { z } from 'zod'
import { backendLocality } from '../crd/gateway-backend.ts'
import type { KinferenceResource } from '../crd/resource.ts'
import { KinfError } from '../errors/kinf-error.ts'
import { noWorkloads, type Workloads } from '../kube/watched-pod.ts'
import { builtinConditions } from '../policy/conditions/builtin-conditions.ts'
import type { ConditionRegistry } from '../policy/conditions/policy-condition.ts'
import type { StrategyRegistry } from '../routing/strategies/define-strategy.ts'
import { builtinStrategies } from '../routing/strategies/strategy-registry.ts'
import { canonicalJson } from './canonical-json.ts'
import { checkReferences } from './check-references.ts'
import type { ConfigIssue } from './config-issue.ts'
import {
  ConfigSnapshot,
  type ConfigSnapshotContent,
  snapshotSchemaOf,
  snapshotSchemaVersion,
} from './config-snapshot.ts'
import { type ResolvedEndpoints, resolveEndpoints } from './resolve-endpoints.ts'
import type { Indexed } from './resource-index.ts'

export type CompileResult =
  | { ok: true; snapshot: ConfigSnapshot; resolved: ResolvedEndpoints }
  | { ok: false; issues: ConfigIssue[] }

/**
 * Compiles schema-valid resources into the runtime snapshot, or returns why it cannot.
 * Pure apart from hashing with Web Crypto, which workerd and Node both provide.
 */
export async function compileSnapshot(
  resources: readonly KinferenceResource[],
  defaultNamespace: string,
  workloads: Workloads = noWorkloads,
  conditions: ConditionRegistry = builtinConditions,
  strategies: StrategyRegistry = builtinStrategies,
): Promise<CompileResult> {
  const { index, issues } = checkReferences(resources, defaultNamespace, conditions)
  if (issues.length > 0) return { ok: false, issues }
  const table = <R extends KinferenceResource>(map: Map<string, Indexed<R>>) =>
    Object.fromEntries(
      [...map].map(([id, { namespace, resource }]) => [
        id,
        { namespace, name: resource.metadata.name, spec: resource.spec as R['spec'] },
      ]),
    )
  const backends = table(index.GatewayBackend)
  const resolved = resolveEndpoints(index, workloads)
  const content: ConfigSnapshotContent = {
    kind: 'KinferenceConfigSnapshot',
    schemaVersion: snapshotSchemaVersion,
    pools: table(index.InferencePool),
    workerSets: table(index.InferenceWorkerSet),
    providers: table(index.InferenceProvider),
    backends: Object.fromEntries(
      Object.entries(backends).map(([id, backend]) => [
        id,
        { ...backend, locality: backendLocality(backend.spec) },
      ]),
    ),
    policies: table(index.InferencePolicy),
    endpoints: resolved.endpoints,
    tenants: Object.fromEntries(
      [...index.InferencePolicy].flatMap(([id, { resource }]) =>
        resource.spec.tenants.map((tenant) => [tenant.name, id] as const),
      ),
    ),
  }
  const hash = await sha256Hex(canonicalJson(content))
  const snapshot = snapshotSchemaOf({ conditions, strategies }).parse({
    ...content,
    hash: `sha256:${hash}`,
  })
  return { ok: true, snapshot, resolved }
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/**
 * Verifies a snapshot read from disk, Redis or KV: its schema (the built-in plugins', or
 * snapshotSchemaOf another's, built once by the caller), and that the hash matches.
 */
export async function verifySnapshot(
  value: unknown,
  schema: z.ZodType<ConfigSnapshot> = ConfigSnapshot,
): Promise<ConfigSnapshot> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    throw new KinfError('invalid_config', `not a config snapshot: ${z.prettifyError(parsed.error)}`)
  }
  const { hash, ...content } = parsed.data
  const expected = `sha256:${await sha256Hex(canonicalJson(content))}`
  if (hash !== expected) {
    throw new KinfError(
      'invalid_config',
      `snapshot hash ${hash} does not match its content (${expected})`,
    )
  }
  return parsed.data
}
