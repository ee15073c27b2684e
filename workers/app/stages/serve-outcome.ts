import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { tracedHeaders } from '../../../shared/tracing/traced-headers.ts'
import { answer } from '../answer-upstream.ts'
import type { EdgeOutcome } from '../decide-request.ts'
import { refusalOf } from '../decision-refusal.ts'
import type { EdgeDeps, EdgeLimits } from '../edge-deps.ts'
import { limitEventStream } from '../limit-event-stream.ts'
import type { EdgeRequest } from '../read-edge-request.ts'
import { answerContext, type ServeContext, serveDecision } from '../serve-decision.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'
import { keepAlive } from './keep-alive.ts'

type Reads =
  | 'requestId'
  | 'edgeId'
  | 'passHeaders'
  | 'snapshot'
  | 'terms'
  | 'request'
  | 'admitted'
  | 'outcome'

/**
 * Stage 7: the answer. The scorer's, when it served the request; else the decision carried
 * out (refused, deferred, or its attempts tried in order, serve-decision.ts). Streams are
 * held to the stream limits (limit-event-stream.ts).
 */
export function serveOutcome(deps: EdgeDeps, limits: EdgeLimits): EdgeStage<Reads, never> {
  return edgeStage(
    'serveOutcome',
    {
      reads: [
        'requestId',
        'edgeId',
        'passHeaders',
        'snapshot',
        'terms',
        'request',
        'admitted',
        'outcome',
      ],
      span: 'serve',
    },
    async (c, _next, trace) => {
      const requestId = c.get('requestId')
      const request = c.get('request')
      const outcome = c.get('outcome')
      const admitted = c.get('admitted')
      const serving: ServeContext = {
        requestId,
        edgeId: c.get('edgeId'),
        passHeaders: tracedHeaders(c.get('passHeaders'), trace?.span),
        ...(trace && { trace: trace.scope }),
        signal: c.req.raw.signal,
        charge: admitted.charge,
        basis: admitted.basis,
        estimatedTokens: admitted.estimatedTokens,
        decisionHeaders: c.get('terms').decisionHeaders,
        background: (work: Promise<unknown>) => keepAlive(c, work),
      }
      const response = limitEventStream(
        outcome.kind === 'served'
          ? await answer(outcome.response, request, answerContext(serving), {
              decision: null,
              notes: [],
            })
          : await carryOut(deps, c.get('snapshot'), request, outcome, serving),
        limits,
        {
          nowMs: deps.nowMs,
          onCut: (why) =>
            deps.log(`stream cut by the edge (${why})`, { level: 'warn', request_id: requestId }),
        },
      )
      return response
    },
  )
}

/** A decision made (by the edge or the scorer) and not yet served: refused, deferred, or tried. */
function carryOut(
  deps: EdgeDeps,
  snapshot: ConfigSnapshot,
  request: EdgeRequest,
  outcome: Extract<EdgeOutcome, { kind: 'decided' }>,
  serving: ServeContext,
): Promise<Response> {
  const { decision } = outcome
  if (decision.kind !== 'serve') throw refusalOf(deps, snapshot, request, decision)
  return serveDecision(deps, snapshot, request, decision, serving, outcome)
}
