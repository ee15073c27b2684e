import { constantTimeEqual } from '../../shared/auth/constant-time-equal.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { prometheusTextContentType } from '../../shared/metrics/create-prometheus-registry.ts'
import { openAiErrorBody } from '../../shared/openai/openai-error-body.ts'
import type { EdgeMetrics } from '../app/edge-metrics.ts'

/**
 * The Worker's /metrics: its isolate's counters, for whoever holds METRICS_TOKEN (the
 * counters say what tenants send, so the public hostname serves them to no one else).
 * Null when the request is not for it, or no token is set (then /metrics is an unknown
 * path, as on the Node edge's API port). Each isolate counts its own requests from its
 * start: a scrape reads the one isolate it reaches (docs/metrics.md says what that means).
 */
export function workerMetricsRoute(
  token: string | undefined,
  metrics: EdgeMetrics,
): (request: Request) => Response | null {
  return (request) => {
    if (token === undefined || new URL(request.url).pathname !== '/metrics') return null
    const given = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? ''
    if (!constantTimeEqual(given, token))
      return refusal(new KinfError('unauthorized', 'a valid metrics token is required'))
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const refused = refusal(
        new KinfError('invalid_request', `no route for ${request.method} /metrics`, {
          status: 405,
        }),
      )
      refused.headers.set('allow', 'GET, HEAD')
      return refused
    }
    return new Response(request.method === 'HEAD' ? null : metrics.render(), {
      headers: { 'content-type': prometheusTextContentType, 'cache-control': 'no-store' },
    })
  }
}

function refusal(error: KinfError): Response {
  return Response.json(openAiErrorBody(error), { status: error.status })
}
