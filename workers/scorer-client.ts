import { type EdgeClaims, signEdgeRequest } from '../shared/auth/edge-signature.ts'
import { KinfError } from '../shared/errors/kinf-error.ts'
import {
  type PoolEstimateRequest,
  PoolEstimateResponse,
  poolEstimatePath,
} from '../shared/scorer-api/pool-estimate.ts'

/** A PoolEstimateRequest whose body is the client's JSON text. */
export type EstimateCall = Omit<PoolEstimateRequest, 'body'> & { bodyText: string }

/** The in-cluster scorer, as the edge uses it. */
export interface ScorerPort {
  /**
   * How each pool would serve this prompt; throws when the scorer cannot be reached. The
   * client's body goes as the text it arrived in (a long prompt is not serialized again).
   */
  estimate(request: EstimateCall, claims: EdgeClaims): Promise<PoolEstimateResponse>
  /** Forwards an OpenAI request; the scorer's answer as is. Throws upstream_unavailable when unreachable. */
  forward(
    path: '/v1/chat/completions' | '/v1/completions',
    body: string,
    claims: EdgeClaims,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response>
}

export interface ScorerClientOptions {
  url: string
  /** The HMAC secret shared with the scorer. */
  signingSecret: string
  nowSeconds: () => number
  /** The runtime's fetch (workerd's, Node's, or a service binding's). */
  fetch: typeof fetch
  /** Estimates are advice: past this the edge decides without them. */
  estimateTimeoutMs?: number
}

/** Signs every request as the scorer requires (shared/auth/edge-signature.ts). */
export function createScorerClient(options: ScorerClientOptions): ScorerPort {
  const base = options.url.replace(/\/$/, '')
  const post = async (
    path: string,
    body: string,
    claims: EdgeClaims,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ) => {
    const signed = await signEdgeRequest(
      options.signingSecret,
      { method: 'POST', path, body },
      claims,
      options.nowSeconds(),
    )
    try {
      return await options.fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers, ...signed },
        body,
        ...(signal ? { signal } : {}),
      })
    } catch (error) {
      if ((error as Error).name === 'AbortError' && signal?.aborted) throw error
      throw new KinfError(
        'upstream_unavailable',
        `scorer unreachable: ${(error as Error).message}`,
        {
          cause: error,
        },
      )
    }
  }
  return {
    async estimate(request, claims) {
      const timeout = AbortSignal.timeout(options.estimateTimeoutMs ?? 2_000)
      // bodyText is a JSON object already (the edge parsed it): spliced in, not re-encoded.
      const json = `{"kind":${JSON.stringify(request.kind)},"targets":${JSON.stringify(request.targets)},"body":${request.bodyText}}`
      const response = await post(poolEstimatePath, json, claims, {}, timeout)
      const text = await response.text()
      if (!response.ok)
        throw new KinfError(
          'upstream_error',
          `scorer estimate answered ${response.status}: ${text.slice(0, 200)}`,
        )
      const parsed = PoolEstimateResponse.safeParse(JSON.parse(text))
      if (!parsed.success)
        throw new KinfError('upstream_error', 'scorer estimate: unexpected answer')
      return parsed.data
    },
    forward(path, body, claims, headers, signal) {
      return post(path, body, claims, headers, signal)
    },
  }
}
