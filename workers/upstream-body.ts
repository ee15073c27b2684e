import type { ConfigSnapshot } from '../shared/config/config-snapshot.ts'
import { findTenant } from '../shared/policy/evaluate-policy.ts'
import { type CacheSalter, createCacheSalter } from '../shared/tenancy/cache-salt.ts'
import type { EdgeDeps } from './edge-deps.ts'
import type { EdgeRequest } from './read-edge-request.ts'

/**
 * The body the scorer gets (and, through it, the pods): the client's bytes when nothing in
 * them changes (a 32 KB prompt is not serialized again), else the request with usage asked
 * for in a stream (so the quota ledger settles on what was used), the model the attempt
 * names, and, for a tenant whose prefix cache is isolated, the tenant's cache_salt
 * (shared/tenancy/cache-salt.ts) in place of the client's.
 */
export async function scorerBody(
  deps: Pick<EdgeDeps, 'cacheSalter'>,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  model: string = request.model,
): Promise<string> {
  const salt = await tenantCacheSalt(deps, snapshot, request)
  if (!request.stream && model === request.model) {
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

/** Streams ask for usage upstream, so the quota ledger can settle on what was used. */
export function withUsage(request: EdgeRequest): object {
  if (!request.stream) return request.body
  return {
    ...request.body,
    stream_options: { ...request.body.stream_options, include_usage: true },
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
