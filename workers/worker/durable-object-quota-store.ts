import { KinfError } from '../../shared/errors/kinf-error.ts'
import { checkQuotaClock, checkQuotaCount } from '../../shared/quota/quota-ledger.ts'
import {
  parseQuotaLimits,
  type QuotaAdmission,
  type QuotaLimits,
  type QuotaStore,
} from '../../shared/quota/quota-store.ts'

/** The RPC surface of a QuotaLedgerObject stub. */
export interface QuotaLedgerStub {
  admit(
    limits: QuotaLimits,
    estimatedTokens: number,
    nowMs: number,
  ): Promise<QuotaAdmission | { invalid: string }>
  settle(
    limits: QuotaLimits,
    reservation: string,
    actualTokens: number,
    nowMs: number,
  ): Promise<{ invalid: string } | null>
}

/**
 * What the store needs of the QUOTA_LEDGER binding (a DurableObjectNamespace of
 * QuotaLedgerObject), written out so this file type-checks in Node's program too.
 */
export interface QuotaLedgerNamespace<Id = unknown> {
  idFromName(name: string): Id
  get(id: Id): QuotaLedgerStub
}

/**
 * The quota store on Workers: one QuotaLedgerObject per tenant, named by the tenant, so
 * every edge location shares one strongly consistent ledger per tenant. The estimate is
 * recorded by the object at admission; settle's copy is not needed.
 */
export function createDurableObjectQuotaStore<Id>(namespace: QuotaLedgerNamespace<Id>): QuotaStore {
  const ledger = (tenant: string) => namespace.get(namespace.idFromName(tenant))
  return {
    async admit(tenant, limits, estimatedTokens, nowMs) {
      // Bad input is the caller's error, checked here so it is not reported as an outage.
      const checked = parseQuotaLimits(limits)
      checkQuotaCount('estimatedTokens', estimatedTokens)
      checkQuotaClock(nowMs)
      let answer: QuotaAdmission | { invalid: string }
      try {
        answer = await ledger(tenant).admit(checked, estimatedTokens, nowMs)
      } catch (error) {
        throw unavailable('admit', error)
      }
      if ('invalid' in answer) throw new KinfError('invalid_request', answer.invalid)
      return answer
    },
    async settle(tenant, limits, reservation, _estimatedTokens, actualTokens, nowMs) {
      const checked = parseQuotaLimits(limits)
      checkQuotaCount('actualTokens', actualTokens)
      checkQuotaClock(nowMs)
      let answer: { invalid: string } | null
      try {
        answer = await ledger(tenant).settle(checked, reservation, actualTokens, nowMs)
      } catch (error) {
        throw unavailable('settle', error)
      }
      if (answer !== null) throw new KinfError('invalid_request', answer.invalid)
    },
  }
}

function unavailable(operation: string, error: unknown): KinfError {
  if (KinfError.isInstance(error)) return error
  const message = error instanceof Error ? error.message : String(error)
  return new KinfError('upstream_unavailable', `quota ledger: ${operation}: ${message}`, {
    cause: error,
  })
}
