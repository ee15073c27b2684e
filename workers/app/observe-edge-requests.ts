import type { Context, MiddlewareHandler } from 'hono'
import { type Usage, usageOfJson } from '../../shared/openai/usage.ts'
import type { EdgeRequestLabels } from './edge-metrics.ts'
import { createRequestLabeller } from './edge-request-labels.ts'
import type { EdgeEnv, EdgeVariables } from './stages/edge-stage.ts'
import { type MeteredStream, observeSseUsage, recordedUsage } from './usage-tap.ts'

/** A request as it was answered: what its stages learnt of it, and its status. */
export interface AnsweredRequest {
  /** Its tenant and model, bounded for metric labels (edge-request-labels.ts). */
  labels: EdgeRequestLabels
  /** The tenant as authenticated and the model as the client named it, when known. */
  tenant: string | undefined
  model: string | undefined
  status: number
  /** Its answer went to the client through another request of the app (/v1/responses). */
  handedOver: boolean
  /** The app made it itself, for another request (the chat request of a /v1/responses). */
  internal: boolean
}

/** A request whose answer has ended, the last byte of a stream included. */
export interface EndedRequest extends AnsweredRequest {
  /** Seconds from arrival to the first generated text (streams); null otherwise. */
  ttftSeconds: number | null
  /** Seconds from arrival to the answer's end. */
  e2eSeconds: number
  /** The answer reached its end (a stream its `[DONE]`); false when it was cut. */
  complete: boolean
  /** The tokens it used (a successful completion's); null for anything else. */
  tokens: TokensUsed | null
}

export interface TokensUsed {
  prompt: number
  completion: number
  /** Prompt tokens served from a prefix cache, when the answer said. */
  cached: number | null
}

/** One of the things watching the edge's requests (metrics, traces, the access log). */
export interface EdgeRequestObserver {
  /** Before any stage runs: may set the context's variables (the trace). */
  arrived?(c: Context<EdgeEnv>): void
  /** Once the answer's status is known. */
  answered?(answered: AnsweredRequest): void
  /** Once a stream's generated text starts (seconds since arrival). */
  firstText?(answered: AnsweredRequest, seconds: number): void
  /** Once the answer has ended. */
  ended?(c: Context<EdgeEnv>, ended: EndedRequest): void
}

export interface ObserveEdgeRequestsOptions {
  nowMs: () => number
  observers: readonly EdgeRequestObserver[]
  /** See AnsweredRequest.handedOver. */
  handedOver?: (request: Request) => boolean
  /** See AnsweredRequest.internal. */
  internal?: (request: Request) => boolean
}

/**
 * Watches every request around everything else (registered first in edge-app.ts): so a
 * request is seen whatever answers it, the edge's own errors included (a failed key's 401,
 * a refusal's 400, an unknown path's 404, a quota's 429, a kept-local 503), which the
 * stages that serve never see. Each observer hears of its arrival, its answer, and its end
 * with the tokens and latencies of a successful completion. /healthz is a probe, not a
 * request.
 */
export function observeEdgeRequests(
  options: ObserveEdgeRequestsOptions,
): MiddlewareHandler<EdgeEnv> {
  const { nowMs, observers } = options
  const labelsOf = createRequestLabeller()
  return async (c, next) => {
    if (c.req.path === '/healthz') return next()
    const arrivedMs = nowMs()
    for (const observer of observers) observer.arrived?.(c)
    await next()
    const set = <K extends keyof EdgeVariables>(name: K) =>
      c.get(name) as EdgeVariables[K] | undefined
    const request = set('request')
    const model = request?.model ?? set('embedding')?.model
    const tenant = set('identity')?.tenant
    const answered: AnsweredRequest = {
      labels: labelsOf({ snapshot: set('snapshot'), tenant, model }),
      tenant,
      model,
      status: c.res.status,
      handedOver: options.handedOver?.(c.req.raw) ?? false,
      internal: options.internal?.(c.req.raw) ?? false,
    }
    for (const observer of observers) observer.answered?.(answered)
    const since = (ms: number) => (ms - arrivedMs) / 1000
    const end = (ended: Omit<EndedRequest, keyof AnsweredRequest | 'e2eSeconds'>) => {
      const done = { ...answered, ...ended, e2eSeconds: since(nowMs()) }
      for (const observer of observers) observer.ended?.(c, done)
    }
    const response = c.res
    const succeeded = response.status >= 200 && response.status < 300
    const read = request ?? set('embedding')
    if (read === undefined || !succeeded) {
      end({ ttftSeconds: null, complete: true, tokens: null })
      return
    }
    const promptBasis = set('admitted')?.basis.promptTokens ?? read.promptTokens
    const type = response.headers.get('content-type') ?? ''
    if (response.body && type.includes('text/event-stream')) {
      let ttftSeconds: number | null = null
      c.res = new Response(
        observeSseUsage(response.body, {
          onFirstText: () => {
            ttftSeconds = since(nowMs())
            for (const observer of observers) observer.firstText?.(answered, ttftSeconds)
          },
          onEnd: (metered) => {
            const upstream = (request && recordedUsage(request)) ?? metered.usage
            const tokens = streamUsage({ ...metered, usage: upstream }, promptBasis)
            end({ ttftSeconds, complete: metered.complete, tokens })
          },
        }),
        response,
      )
      return
    }
    // The usage answer-upstream.ts read from the answer, else the answer read again.
    const recorded = request ? recordedUsage(request) : null
    const tokens = fromUsage(recorded ?? null) ?? (await jsonUsage(c, promptBasis))
    end({ ttftSeconds: null, complete: true, tokens })
  }
}

/**
 * A stream's usage as the edge saw it upstream (the usage it asks for whatever the client
 * did), else the admitted prompt and one token per event with text.
 */
function streamUsage(metered: MeteredStream, promptBasis: number): TokensUsed {
  return (
    fromUsage(metered.usage) ?? {
      prompt: promptBasis,
      completion: metered.textEvents,
      cached: null,
    }
  )
}

/** A JSON answer's usage: an OpenAI answer carries it (the edge's assembled ones too). */
async function jsonUsage(c: Context<EdgeEnv>, promptBasis: number): Promise<TokensUsed> {
  const text = await c.res
    .clone()
    .text()
    .catch(() => '')
  return fromUsage(usageOfJson(text)) ?? { prompt: promptBasis, completion: 0, cached: null }
}

function fromUsage(usage: Usage | null): TokensUsed | null {
  if (usage === null) return null
  if (usage.prompt_tokens === undefined && usage.completion_tokens === undefined) return null
  return {
    prompt: usage.prompt_tokens ?? 0,
    completion: usage.completion_tokens ?? 0,
    cached: usage.prompt_tokens_details?.cached_tokens ?? null,
  }
}
