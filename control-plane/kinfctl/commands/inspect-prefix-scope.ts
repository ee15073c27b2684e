import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { findTenant } from '../../../shared/policy/find-tenant.ts'

/**
 * Whose cached blocks a prefix report can match. Without --tenant the prompt is looked up
 * as a Shared tenant sends it (no cache_salt); the edge salts every Isolated tenant's
 * requests (shared/tenancy/cache-salt.ts), vLLM mixes the salt into the first block's
 * hash, and so the index holds their blocks under keys an unsalted lookup never meets.
 * Saying so is the report's job: 0 matched tokens must not read as "nothing cached".
 */
export interface PrefixScope {
  /** The tenant the prompt was looked up as; null: as sent with no cache_salt. */
  asTenant: string | null
  /** Tenants with an Isolated prefix cache whose blocks this report cannot match. */
  notMatched: string[]
  /** What an operator needs to see theirs; null when nothing is left out. */
  howToInclude: string | null
}

export function inspectPrefixScope(
  snapshot: ConfigSnapshot,
  tenant: string | undefined,
): PrefixScope {
  if (tenant !== undefined) return { asTenant: tenant, notMatched: [], howToInclude: null }
  const isolated = Object.keys(snapshot.tenants)
    .filter((name) => findTenant(snapshot, name)?.tenant.prefixCache.sharing !== 'Shared')
    .sort()
  return {
    asTenant: null,
    notMatched: isolated,
    howToInclude:
      isolated.length === 0
        ? null
        : `pass --tenant T (one of ${isolated.join(', ')}) with KINFERENCE_SIGNING_SECRET set to the edge's signing secret: an Isolated tenant's blocks are keyed with a per-tenant cache_salt derived from it`,
  }
}

/** The report's lines about its scope: nothing when every tenant's blocks can match. */
export function prefixScopeNotes(scope: PrefixScope): string[] {
  if (scope.asTenant !== null) return [`looked up as tenant ${scope.asTenant} sends it`]
  if (scope.howToInclude === null) return []
  return [
    `NOT COUNTED: blocks of tenants whose prefix cache is Isolated (${scope.notMatched.join(', ')}); this lookup is unsalted and matches only Shared tenants' blocks.`,
    `To see theirs: ${scope.howToInclude}.`,
  ]
}
