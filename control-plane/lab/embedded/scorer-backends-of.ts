import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import type { ScorerBackends, ScorerPool } from '../../scorer/scorer-config.ts'
import { backendsOfSnapshot, poolsOfSnapshot } from '../../scorer/state/scorer-state.ts'

/**
 * GatewayBackend name → the pool (by id) and model it targets, for the edge's
 * allowed-backends claim. Backends that target a provider never reach the scorer, so they
 * are left out.
 */
export function scorerBackendsOf(snapshot: ConfigSnapshot): ScorerBackends {
  return backendsOfSnapshot(snapshot)
}

/** The snapshot's pools as the scorer's config lists them, each with its namespace. */
export function scorerPoolsOf(snapshot: ConfigSnapshot): ScorerPool[] {
  return poolsOfSnapshot(snapshot)
}
