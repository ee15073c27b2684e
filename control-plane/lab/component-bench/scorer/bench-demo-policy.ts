import type { ConfigSnapshot } from '../../../../shared/config/config-snapshot.ts'
import type { InferencePoolSpec } from '../../../../shared/crd/inference-pool.ts'
import type { KinferenceResource } from '../../../../shared/crd/resource.ts'
import { policyBundleOf } from '../../../../shared/policy/policy-bundle.ts'
import { demoSnapshot } from '../../embedded/demo-snapshot.ts'

/** The HMAC secret the scorer benchmarks sign with, as an edge would. */
export const benchSecret = 'bench-signing-secret-0123456789'

/**
 * The demo policy's tenant, model and pool: local first, bursting to Bedrock when the pool
 * is saturated, so each request's decision depends on the pool's status for its prompt.
 */
export const demoTenant = 'demo'
export const demoModel = 'qwen3.8-27b-fp8'
export const demoPool = 'sim-27b'

/** The demo config the scorer benchmarks route with, its pool's spec and the tenant's bundle. */
export async function benchDemoPolicy(): Promise<{
  snapshot: ConfigSnapshot
  spec: InferencePoolSpec
  bundleJson: string
}> {
  const snapshot = await demoSnapshot('http://127.0.0.1:1', 'bench', '0'.repeat(64), withoutTtftSlo)
  const spec = snapshot.pools[`demo/${demoPool}`]?.spec
  const bundle = policyBundleOf(snapshot, demoTenant)
  if (!spec || !bundle) throw new Error('the demo snapshot lost its pool or tenant')
  return { snapshot, spec, bundleJson: JSON.stringify(bundle) }
}

/** The benchmark pods answer in constant time: no TTFT limit makes the pool saturated. */
function withoutTtftSlo(resource: KinferenceResource): void {
  if (resource.kind === 'InferencePool') delete resource.spec.ttftSloMs
}
