import { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api'
import type { Context } from 'hono'
import { genAi, genAiUsageAttributes } from '../../shared/tracing/gen-ai-attributes.ts'
import { scopeUnder } from '../../shared/tracing/in-span.ts'
import { stageAttribute } from '../../shared/tracing/stage-spans.ts'
import { contextOfHeaders } from '../../shared/tracing/trace-context.ts'
import type { EdgeRequestObserver, EndedRequest } from './observe-edge-requests.ts'
import type { EdgeEnv, EdgeVariables } from './stages/edge-stage.ts'

/** The edge's routes, for span names: any other path is named by its method alone. */
const routes: readonly [RegExp, string][] = [
  [/^\/v1\/chat\/completions$/, '/v1/chat/completions'],
  [/^\/v1\/completions$/, '/v1/completions'],
  [/^\/v1\/responses$/, '/v1/responses'],
  [/^\/v1\/models$/, '/v1/models'],
  [/^\/v1\/models\/.+$/, '/v1/models/{model}'],
]

/**
 * Each request's server span, the parent of its stages' spans (edge-stage.ts): it continues
 * the client's W3C trace context, is named `${method} ${route}` as OpenTelemetry's HTTP
 * conventions ask, and ends with the answer (a stream's last byte), carrying the GenAI
 * attributes of a completion: the model, the tokens used, the time to first token.
 */
export function traceEdgeRequests(tracer: Tracer): EdgeRequestObserver {
  return {
    arrived: (c) => {
      const parent = contextOfHeaders((name) => c.req.header(name))
      const route = routes.find(([pattern]) => pattern.test(c.req.path))?.[1]
      const span = tracer.startSpan(
        route ? `${c.req.method} ${route}` : c.req.method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            [stageAttribute]: 'request',
            'http.request.method': c.req.method,
            'url.path': c.req.path.slice(0, 256),
            ...(route && { 'http.route': route }),
          },
        },
        parent,
      )
      c.set('trace', { span, scope: scopeUnder({ tracer, parent }, span) })
    },
    ended: (c, ended) => {
      const span = c.get('trace')?.span
      if (span) endRequestSpan(span, c, ended)
    },
  }
}

function endRequestSpan(span: Span, c: Context<EdgeEnv>, ended: EndedRequest): void {
  const set = <K extends keyof EdgeVariables>(name: K) =>
    c.get(name) as EdgeVariables[K] | undefined
  const request = set('request')
  const embedding = set('embedding')
  span.setAttributes({
    'http.response.status_code': ended.status,
    ...(set('requestId') && { 'kinference.request_id': set('requestId') }),
    ...(ended.tenant && { 'kinference.tenant': ended.tenant }),
    ...(request && {
      [genAi.operationName]: request.kind === 'chat' ? 'chat' : 'text_completion',
      [genAi.requestModel]: request.model,
      [genAi.requestStream]: request.stream,
    }),
    ...(embedding && {
      [genAi.operationName]: 'embeddings',
      [genAi.requestModel]: embedding.model,
    }),
    ...(ended.tokens &&
      genAiUsageAttributes({
        inputTokens: ended.tokens.prompt,
        outputTokens: ended.tokens.completion,
        cachedInputTokens: ended.tokens.cached,
      })),
    ...(ended.ttftSeconds !== null && { [genAi.timeToFirstChunk]: ended.ttftSeconds }),
  })
  // A server span is an error for a 5xx only: a 4xx is the client's (HTTP conventions).
  if (ended.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
  if (!ended.complete) span.setAttribute('kinference.answer', 'cut')
  span.end()
}
