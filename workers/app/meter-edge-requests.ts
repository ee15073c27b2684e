import type { Context, MiddlewareHandler } from 'hono'
import { type Usage, usageOfJson } from '../../shared/openai/usage.ts'
import type { EdgeMetrics, EdgeRequestLabels } from './edge-metrics.ts'
import { createRequestLabeller } from './edge-request-labels.ts'
import type { EdgeEnv, EdgeVariables } from './stages/edge-stage.ts'
import { type MeteredStream, observeSseUsage, recordedStreamUsage } from './usage-tap.ts'

export interface MeterEdgeRequestsOptions {
  metrics: EdgeMetrics
  nowMs: () => number
  /**
   * A request another one of the app served and counted (/v1/responses served as a chat
   * completion through the app's own route): not counted again.
   */
  countedInside?: (request: Request) => boolean
}

/**
 * The edge's per-request series, measured around everything else (registered first in
 * edge-app.ts): so a request is counted whatever answers it, the edge's own errors
 * included (a failed key's 401, a refusal's 400, an unknown path's 404, a quota's 429, a
 * kept-local 503), which the stages that serve never see. Each answer counts once, by
 * tenant, model and status; answered ones add their tokens and latencies. /healthz is a
 * probe, not a request.
 */
export function meterEdgeRequests(options: MeterEdgeRequestsOptions): MiddlewareHandler<EdgeEnv> {
  const { metrics, nowMs } = options
  const labelsOf = createRequestLabeller()
  return async (c, next) => {
    if (c.req.path === '/healthz') return next()
    const arrivedMs = nowMs()
    await next()
    if (options.countedInside?.(c.req.raw)) return
    const set = <K extends keyof EdgeVariables>(name: K) =>
      c.get(name) as EdgeVariables[K] | undefined
    const request = set('request')
    const labels = labelsOf({
      snapshot: set('snapshot'),
      tenant: set('identity')?.tenant,
      model: request?.model,
    })
    const response = c.res
    metrics.inc('requests', { ...labels, status: String(response.status) })
    if (request === undefined || response.status < 200 || response.status >= 300) return
    const promptBasis = set('admitted')?.basis.promptTokens ?? request.promptTokens
    const since = (ms: number) => (ms - arrivedMs) / 1000
    const type = response.headers.get('content-type') ?? ''
    if (response.body && type.includes('text/event-stream')) {
      c.res = new Response(
        observeSseUsage(response.body, {
          onFirstText: () => metrics.observe('ttft_seconds', labels, since(nowMs())),
          onEnd: (metered) => {
            const upstream = recordedStreamUsage(request) ?? metered.usage
            countTokens(metrics, labels, streamUsage({ ...metered, usage: upstream }, promptBasis))
            if (metered.complete) metrics.observe('e2e_seconds', labels, since(nowMs()))
          },
        }),
        response,
      )
      return
    }
    countTokens(metrics, labels, await jsonUsage(c, promptBasis))
    metrics.observe('e2e_seconds', labels, since(nowMs()))
  }
}

interface TokensUsed {
  prompt: number
  completion: number
}

/**
 * A stream's usage as the edge saw it upstream (the usage it asks for whatever the client
 * did), else the admitted prompt and one token per event with text.
 */
function streamUsage(metered: MeteredStream, promptBasis: number): TokensUsed {
  return fromUsage(metered.usage) ?? { prompt: promptBasis, completion: metered.textEvents }
}

/** A JSON answer's usage: an OpenAI answer carries it (the edge's assembled ones too). */
async function jsonUsage(c: Context<EdgeEnv>, promptBasis: number): Promise<TokensUsed> {
  const text = await c.res
    .clone()
    .text()
    .catch(() => '')
  return fromUsage(usageOfJson(text)) ?? { prompt: promptBasis, completion: 0 }
}

function fromUsage(usage: Usage | null): TokensUsed | null {
  if (usage === null) return null
  if (usage.prompt_tokens === undefined && usage.completion_tokens === undefined) return null
  return { prompt: usage.prompt_tokens ?? 0, completion: usage.completion_tokens ?? 0 }
}

function countTokens(metrics: EdgeMetrics, labels: EdgeRequestLabels, used: TokensUsed): void {
  metrics.addTokens('prompt_tokens', labels, used.prompt)
  metrics.addTokens('completion_tokens', labels, used.completion)
}
