import type { QuotaFailureMode } from '../../shared/crd/inference-policy.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Log } from '../../shared/logging/log.ts'
import {
  createMemoryQuotaStore,
  type MemoryQuotaStore,
} from '../../shared/quota/memory-quota-store.ts'
import type { QuotaAdmission, QuotaLimits, QuotaStore } from '../../shared/quota/quota-store.ts'
import type { QuotaBuckets } from '../../shared/quota/token-bucket.ts'
import type { QuotaLedgerReader } from '../../shared/state/quota-ledger-reader.ts'
import type { EdgeMetrics } from './edge-metrics.ts'

/**
 * An account's quotas as the policy gives them: its limits and, for a tenant, what to do
 * when the shared store fails. Without a failureMode (a provider's account) it fails closed.
 */
export type AccountQuotas = QuotaLimits & { failureMode?: QuotaFailureMode }

export interface QuotaDeps {
  quotas: QuotaStore
  /** Reads the shared store's buckets, when the store itself cannot (EdgeDeps.quotaReader). */
  quotaReader?: QuotaLedgerReader
  metrics: EdgeMetrics
  nowMs: () => number
  log: Log
}

/** Reservations of the local bucket carry this prefix, so settling finds their store. */
const localPrefix = 'local:'
/** An account without limits: nothing to charge, so no store is asked. */
const unlimited = 'unlimited'

/** This process's (or isolate's) buckets, one ledger per shared store. */
const localStores = new WeakMap<QuotaStore, MemoryQuotaStore>()

/**
 * The quota store's answer. When the store itself fails (Redis or the Durable Object
 * unreachable): with FailOpen, the answer of a bucket local to this edge with the same
 * limits, so every replica still bounds the tenant on its own; otherwise a 503 that says
 * so in the client's terms with a Retry-After. The store's own error (a client library's
 * internals) goes to the log only. (docs/edge-keys-and-errors.md §1.3)
 */
export async function admitQuota(
  deps: QuotaDeps,
  account: string,
  quotas: AccountQuotas,
  estimatedTokens: number,
): Promise<QuotaAdmission> {
  const limits = limitsOf(quotas)
  if (limits.requestsPerMinute === undefined && limits.tokensPerMinute === undefined)
    return { admitted: true, reservation: unlimited }
  try {
    return await deps.quotas.admit(account, limits, estimatedTokens, deps.nowMs())
  } catch (error) {
    if (KinfError.isInstance(error) && error.code === 'invalid_request') throw error
    const failureMode = quotas.failureMode ?? 'FailClose'
    deps.metrics.inc('quota_fallback', { failure_mode: failureMode })
    const why = `quota admission failed for ${account}: ${(error as Error).message}`
    if (failureMode === 'FailClose') {
      deps.log(why, { level: 'warn' })
      throw new KinfError(
        'upstream_unavailable',
        'Quotas cannot be checked right now, so the request was not served; retry shortly.',
        { retryAfterSeconds: 1, cause: error },
      )
    }
    deps.log(`${why}; admitted against this edge's local bucket (FailOpen)`, { level: 'warn' })
    return admitLocally(deps, account, limits, estimatedTokens)
  }
}

/**
 * Charges what a request used to the bucket that admitted it. Never rejects: a store that
 * fails now is logged, and the estimate stays charged.
 */
export async function settleQuota(
  deps: QuotaDeps,
  account: string,
  quotas: AccountQuotas,
  reservation: string,
  estimatedTokens: number,
  actualTokens: number,
): Promise<void> {
  if (reservation === unlimited) return
  const local = reservation.startsWith(localPrefix)
  const store = local ? localStoreOf(deps.quotas) : deps.quotas
  try {
    await store.settle(
      account,
      limitsOf(quotas),
      local ? reservation.slice(localPrefix.length) : reservation,
      estimatedTokens,
      actualTokens,
      deps.nowMs(),
    )
  } catch (error) {
    deps.log(`quota settle failed for ${account}: ${(error as Error).message}`, { level: 'warn' })
  }
}

async function admitLocally(
  deps: QuotaDeps,
  account: string,
  limits: QuotaLimits,
  estimatedTokens: number,
): Promise<QuotaAdmission> {
  const local = localStoreOf(deps.quotas)
  const admission = await local.admit(account, limits, estimatedTokens, deps.nowMs())
  if (!admission.admitted) return admission
  return { admitted: true, reservation: `${localPrefix}${admission.reservation}` }
}

function localStoreOf(shared: QuotaStore): MemoryQuotaStore {
  let local = localStores.get(shared)
  if (!local) {
    local = createMemoryQuotaStore()
    localStores.set(shared, local)
  }
  return local
}

/**
 * The account's buckets after its admission, for the rate-limit headers: as the store
 * answered them with the admission (a Durable Object), else read from the store that
 * admitted it (this edge's local bucket under FailOpen) when that store can be
 * read (the in-memory one can), or through deps.quotaReader; null when neither, or the read
 * fails (headers are never worth failing a request for).
 */
export async function quotaState(
  deps: QuotaDeps,
  account: string,
  admission: QuotaAdmission,
): Promise<QuotaBuckets | null> {
  if (admission.admitted && admission.reservation === unlimited) return null
  if (admission.state) return admission.state
  const local = admission.admitted && admission.reservation.startsWith(localPrefix)
  const store: QuotaStore = local ? localStoreOf(deps.quotas) : deps.quotas
  const reader = isReader(store) ? store : local ? null : (deps.quotaReader ?? null)
  if (reader === null) return null
  try {
    const [buckets] = await reader.buckets([account])
    return buckets ?? {}
  } catch {
    return null
  }
}

function isReader(store: QuotaStore): store is QuotaStore & QuotaLedgerReader {
  return typeof (store as Partial<QuotaLedgerReader>).buckets === 'function'
}

/** Only the limits go to a store (its schema knows nothing else). */
function limitsOf(quotas: AccountQuotas): QuotaLimits {
  const { requestsPerMinute, tokensPerMinute } = quotas
  return {
    ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
    ...(tokensPerMinute !== undefined ? { tokensPerMinute } : {}),
  }
}
