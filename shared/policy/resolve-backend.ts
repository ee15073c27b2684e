import type { ConfigSnapshot } from '../config/config-snapshot.ts'
import { resourceId } from '../config/resource-index.ts'
import { KinfError } from '../errors/kinf-error.ts'
import type { UpstreamTarget } from './policy-decision.ts'

export interface ResolvedBackend {
  target: UpstreamTarget
  relativeCost: number
}

/**
 * Resolves a backend a policy names (in the policy's namespace) to where it sends
 * requests; its pool or provider resolve in the backend's own namespace, as the
 * snapshot's references do. A dangling name means the snapshot was not compiled by
 * compileSnapshot (which checks references), so it is a configuration error.
 */
export function resolveBackend(
  snapshot: ConfigSnapshot,
  namespace: string,
  name: string,
): ResolvedBackend {
  const id = resourceId(namespace, name)
  const backend = snapshot.backends[id]
  if (backend === undefined) {
    throw new KinfError('invalid_config', `the snapshot has no GatewayBackend "${id}"`)
  }
  const { pool, provider } = backend.spec.target
  const on = pool ?? provider
  if (on === undefined) {
    throw new KinfError(
      'invalid_config',
      `GatewayBackend "${id}" has neither a pool nor a provider`,
    )
  }
  const where = resourceId(backend.namespace, on.name)
  const target: UpstreamTarget = {
    backend: id,
    locality: backend.locality,
    ...(pool ? { pool: where } : { provider: where }),
    model: on.model,
  }
  return { target, relativeCost: backend.spec.relativeCost }
}

/** The pool id of a policy's pool condition, resolved in the policy's namespace. */
export function policyPoolId(namespace: string, poolName: string): string {
  return resourceId(namespace, poolName)
}
