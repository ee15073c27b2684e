import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { findTenant } from '../../shared/policy/find-tenant.ts'
import { type CacheSalter, createCacheSalter } from '../../shared/tenancy/cache-salt.ts'
import type { EdgeDeps } from './edge-deps.ts'
import type { EdgeRequest } from './read-edge-request.ts'

/**
 * The body the scorer gets (and, through it, the pods): the client's bytes when nothing in
 * them changes (a 32 KB prompt is not serialized again), else the request as the edge
 * sends it upstream (withUsage), the model the attempt names, and, for a tenant whose
 * prefix cache is isolated, the tenant's cache_salt (shared/tenancy/cache-salt.ts) in
 * place of the client's.
 */
export async function scorerBody(
  deps: Pick<EdgeDeps, 'cacheSalter'>,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  model: string = request.model,
): Promise<string> {
  const salt = await tenantCacheSalt(deps, snapshot, request)
  if (!request.stream && !request.assembled && model === request.model) {
    if (salt === null) return request.text
    // Appended only when the client sent no cache_salt at all: never a duplicate key.
    const appended = Object.hasOwn(request.body, 'cache_salt')
      ? null
      : appendMember(request.text, 'cache_salt', salt)
    if (appended !== null) return appended
  }
  return JSON.stringify({
    ...withUsage(request),
    model,
    ...(salt === null ? {} : { cache_salt: salt }),
  })
}

/**
 * The request as the edge sends it upstream: streamed, with usage on every chunk, whenever
 * it streams or can be assembled from a stream (EdgeRequest.assembled), so the quota
 * ledger knows what was used however the answer ends, the client's leaving included. The
 * edge removes from the client's stream what it did not ask for (usage-tap.ts).
 */
export function withUsage(request: EdgeRequest): object {
  if (!request.stream && !request.assembled) return request.body
  return {
    ...request.body,
    stream: true,
    stream_options: {
      ...request.body.stream_options,
      include_usage: true,
      continuous_usage_stats: true,
    },
  }
}

/**
 * The salt for an Isolated tenant (the default, also for a tenant the snapshot no longer
 * knows); null for a Shared one, whose client's cache_salt goes as sent.
 */
export async function tenantCacheSalt(
  deps: Pick<EdgeDeps, 'cacheSalter'>,
  snapshot: ConfigSnapshot,
  request: Pick<EdgeRequest, 'tenant' | 'body'>,
): Promise<string | null> {
  const sharing = findTenant(snapshot, request.tenant)?.tenant.prefixCache.sharing ?? 'Isolated'
  if (sharing === 'Shared') return null
  return saltersOf(deps)(request.tenant, request.body.cache_salt ?? null)
}

/** Without the signing secret (a test's hand-built deps): a random key, per app. */
const fallbackSalters = new WeakMap<object, CacheSalter>()

function saltersOf(deps: Pick<EdgeDeps, 'cacheSalter'>): CacheSalter {
  if (deps.cacheSalter) return deps.cacheSalter
  let salter = fallbackSalters.get(deps)
  if (!salter) {
    salter = createCacheSalter(crypto.getRandomValues(new Uint8Array(32)))
    fallbackSalters.set(deps, salter)
  }
  return salter
}

/** `text`, a JSON object with at least one member, with one more at its end; null if not so. */
function appendMember(text: string, name: string, value: string): string | null {
  const closed = text.trimEnd()
  if (!closed.endsWith('}')) return null
  const head = closed.slice(0, -1).trimEnd()
  if (head.endsWith('{')) return null
  return `${head},${JSON.stringify(name)}:${JSON.stringify(value)}}`
}
