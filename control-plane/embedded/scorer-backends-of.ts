import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import type { ScorerConfig, ScorerPool } from '../scorer/scorer-config.ts'

/**
 * GatewayBackend name → the pool and model it targets, for the edge's allowed-backends
 * claim. Backends that target a provider never reach the scorer, so they are left out.
 */
export function scorerBackendsOf(snapshot: ConfigSnapshot): ScorerConfig['backends'] {
  return Object.fromEntries(
    Object.values(snapshot.backends).flatMap((backend) =>
      backend.spec.target.pool
        ? [
            [
              backend.name,
              { pool: backend.spec.target.pool.name, model: backend.spec.target.pool.model },
            ],
          ]
        : [],
    ),
  )
}

/** The snapshot's pools as the scorer's config lists them: by name, without namespace. */
export function scorerPoolsOf(snapshot: ConfigSnapshot): ScorerPool[] {
  return Object.values(snapshot.pools).map((pool) => ({ name: pool.name, spec: pool.spec }))
}
