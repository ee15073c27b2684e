import { type EdgeClaims, signEdgeRequest } from '../../shared/auth/edge-signature.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { RequestKind } from '../../shared/openai/openai-request.ts'
import {
  decidedHeader,
  RouteDecision,
  routeEnvelope,
  routePaths,
} from '../../shared/scorer-api/route-protocol.ts'

/** What a route call came back with: the served answer, or the scorer's decision to carry on from. */
export type RouteAnswer =
  | { kind: 'served'; response: Response }
  | { kind: 'decided'; decided: RouteDecision }

/** The in-cluster scorer, as the edge uses it. */
export interface ScorerPort {
  /**
   * A request whose policy depends on the pools' status, with the tenant's policy bundle
   * (shared/scorer-api/route-protocol.ts): the scorer decides and serves it, or answers
   * the decision. The body goes as the text given (a long prompt is not serialized
   * again). Throws upstream_unavailable when the scorer cannot be reached.
   */
  route(
    kind: RequestKind,
    bundleJson: string,
    body: string,
    claims: EdgeClaims,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<RouteAnswer>
  /** Forwards an OpenAI request; the scorer's answer as is. Throws upstream_unavailable when unreachable. */
  forward(
    path: '/v1/chat/completions' | '/v1/completions' | '/v1/embeddings',
    body: string,
    claims: EdgeClaims,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response>
}

export interface ScorerClientOptions {
  /**
   * The scorer's base URL, or several replicas' (a Service in front of them is one URL):
   * requests rotate over them, and one that cannot be reached is tried on the next.
   */
  urls: readonly string[]
  /** The HMAC secret shared with the scorer. */
  signingSecret: string
  nowSeconds: () => number
  /** The runtime's fetch (workerd's, Node's, or a service binding's). */
  fetch: typeof fetch
}

/** One request to the scorer, as sent to whichever replica takes it. */
interface ScorerCall {
  path: string
  body: string
  claims: EdgeClaims
  headers: Record<string, string>
  signal: AbortSignal | undefined
}

/** How long a replica that could not be reached is tried only after the others. */
const unreachableCooldownMs = 2_000

/**
 * Signs every request as the scorer requires (shared/auth/edge-signature.ts, v4: the body's
 * hash and length in signed headers, so the scorer refuses a bad request before reading
 * its body; fetch sends the body with its content-length, which the signature covers). A replica
 * that cannot be reached (refused, reset, DNS: fetch failed before any answer) is
 * retried on the next one with a fresh signature; nothing the scorer answered is retried.
 */
export function createScorerClient(options: ScorerClientOptions): ScorerPort {
  const bases = options.urls.map((url) => url.replace(/\/$/, ''))
  if (bases.length === 0) throw new KinfError('invalid_config', 'the edge needs a scorer URL')
  const downUntil = new Map<string, number>()
  let turn = 0
  /** Every replica, starting with the next in turn, those recently unreachable last. */
  const order = (nowMs: number) => {
    const start = turn++ % bases.length
    const rotated = [...bases.slice(start), ...bases.slice(0, start)]
    const up = rotated.filter((base) => (downUntil.get(base) ?? 0) <= nowMs)
    return [...up, ...rotated.filter((base) => !up.includes(base))]
  }
  const attempt = async (base: string, call: ScorerCall) => {
    const { path, body } = call
    const signed = await signEdgeRequest(
      options.signingSecret,
      // A nonce per attempt: the scorer refuses one it has seen (a replay).
      { method: 'POST', path, body, nonce: crypto.randomUUID() },
      call.claims,
      options.nowSeconds(),
    )
    return options.fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...call.headers, ...signed },
      body,
      ...(call.signal ? { signal: call.signal } : {}),
    })
  }
  const post = async (call: ScorerCall) => {
    let failure: Error | null = null
    for (const base of order(options.nowSeconds() * 1000)) {
      try {
        const response = await attempt(base, call)
        downUntil.delete(base)
        return response
      } catch (error) {
        if ((error as Error).name === 'AbortError' && call.signal?.aborted) throw error
        failure = error as Error
        downUntil.set(base, options.nowSeconds() * 1000 + unreachableCooldownMs)
      }
    }
    throw new KinfError('upstream_unavailable', `scorer unreachable: ${failure?.message}`, {
      cause: failure,
    })
  }
  return {
    async route(kind, bundleJson, body, claims, headers, signal) {
      const response = await post({
        path: routePaths[kind],
        body: routeEnvelope(bundleJson, body),
        claims,
        headers,
        signal,
      })
      if (response.headers.get(decidedHeader) !== '1') return { kind: 'served', response }
      const text = await response.text()
      let parsed: ReturnType<typeof RouteDecision.safeParse>
      try {
        parsed = RouteDecision.safeParse(JSON.parse(text))
      } catch {
        parsed = RouteDecision.safeParse(undefined)
      }
      if (!parsed.success)
        throw new KinfError('upstream_error', 'scorer route: an answer that is not a decision')
      return { kind: 'decided', decided: parsed.data }
    },
    forward(path, body, claims, headers, signal) {
      return post({ path, body, claims, headers, signal })
    },
  }
}
