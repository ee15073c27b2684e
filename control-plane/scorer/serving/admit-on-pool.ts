import type { ServerResponse } from 'node:http'
import { finished } from 'node:stream'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { openAiErrorBody } from '../../../shared/openai/openai-error-body.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import type { HoldTerms, PoolLookup, RouteResult } from '../../../shared/routing/pool-router.ts'
import { type Admitted, isHeldTooLong } from '../pools/pool-admission.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import type { PodContext } from './inference-context.ts'

/**
 * The first attempt: "saturated" at once when the edge may burst and every pod is over
 * its limits (bursting beats waiting); otherwise through the pool's admission, which
 * dispatches now or holds the request until its best pod can start it. null: the client
 * left while held.
 */
export async function admitOnPool(
  context: Pick<PodContext, 'metrics'>,
  attempt: { prepared: { pool: PoolRuntime }; lookup: PoolLookup; scored?: RouteResult },
  allowBurst: boolean,
  client: ClientLink,
  /** Its rule's band and hold (holdTermsOf); absent: as the pool's late binding holds. */
  terms?: HoldTerms,
  /** Its rule bursts what it cannot serve in time: a hold that ends goes back to the edge. */
  burstWhenHeldTooLong = false,
): Promise<Admitted | { saturated: string; heldMs?: number } | null> {
  const { lookup } = attempt
  const { pool } = attempt.prepared
  const { router } = pool
  let route = attempt.scored
  if (allowBurst) {
    route ??= router.score(lookup, performance.now())
    if (route.decision.pod !== null && router.saturation(route).saturated) {
      context.metrics.saturated.labels({ pool: pool.name }).inc()
      return {
        saturated: `pool ${pool.name} is saturated: every pod's predicted TTFT is over its limit`,
      }
    }
  }
  // Nothing is held without late binding or a hold of the rule's: no need to watch the client.
  const holds = terms?.deadlineMs !== undefined && terms.deadlineMs !== null
  if (!pool.admission.enabled && !holds)
    return { route: router.dispatchNow(lookup, performance.now(), { route }), heldMs: 0 }
  const sinceMs = performance.now()
  try {
    return await pool.admission.admit(lookup, {
      signal: client.gone,
      answered: client.answered,
      ...(route ? { route } : {}),
      ...(terms ? { terms } : {}),
    })
  } catch (error) {
    // Held to the end of its hold: where the rule bursts and the request may leave, the
    // edge's next attempt is the provider (heldMs: its hold's span); otherwise the 429 stands.
    if (allowBurst && burstWhenHeldTooLong && isHeldTooLong(error))
      return {
        saturated: `pool ${pool.name} could not start the request within its hold`,
        heldMs: performance.now() - sinceMs,
      }
    throw error
  }
}

/** The client of a request, as admission watches it while the request is held. */
export interface ClientLink {
  /** Aborts when the client leaves. */
  gone: AbortSignal
  /** Settles once the client has its answer (shutdown waits for it, bounded). */
  answered: () => Promise<unknown>
}

/** A response's client: gone when it closes before its end; `release` stops watching. */
export function responseLink(res: ServerResponse): ClientLink & { release(): void } {
  const left = new AbortController()
  const onClose = () => left.abort()
  if (res.destroyed) left.abort()
  else res.once('close', onClose)
  return {
    gone: left.signal,
    answered: () => new Promise((resolve) => finished(res, () => resolve(undefined))),
    release: () => res.off('close', onClose),
  }
}

/**
 * The answer to a request the edge let burst past a saturated pool when nothing else is
 * tried: 503 with x-kinference-saturated, which the edge reads to move on.
 */
export function answerSaturated(res: ServerResponse, message: string): void {
  const failure = new KinfError('saturated', message)
  res.writeHead(failure.status, {
    'content-type': 'application/json',
    [kinferenceHeaders.saturated]: '1',
    'retry-after': '1',
  })
  res.end(JSON.stringify(openAiErrorBody(failure)))
}
