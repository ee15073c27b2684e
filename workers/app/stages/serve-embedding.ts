import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { tracedHeaders } from '../../../shared/tracing/traced-headers.ts'
import { refusalOf } from '../decision-refusal.ts'
import type { EdgeDeps } from '../edge-deps.ts'
import type { ServeContext } from '../serve-decision.ts'
import { serveEmbeddingDecision } from '../serve-embedding-decision.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'
import { keepAlive } from './keep-alive.ts'

type Reads =
  | 'requestId'
  | 'edgeId'
  | 'passHeaders'
  | 'snapshot'
  | 'terms'
  | 'embedding'
  | 'admitted'
  | 'outcome'

/**
 * serveOutcome's counterpart for POST /v1/embeddings: a refusal or deferral answered as a
 * completion's would be, else the decision's in-cluster attempts (serve-embedding-decision.ts).
 */
export function serveEmbedding(deps: EdgeDeps): EdgeStage<Reads, never> {
  return edgeStage(
    'serveEmbedding',
    {
      reads: [
        'requestId',
        'edgeId',
        'passHeaders',
        'snapshot',
        'terms',
        'embedding',
        'admitted',
        'outcome',
      ],
      span: 'serve',
    },
    async (c, _next, trace) => {
      const request = c.get('embedding')
      const outcome = c.get('outcome')
      const snapshot = c.get('snapshot')
      // decideEmbedding decides at the edge: the scorer never served it already.
      const decision = outcome.kind === 'decided' ? outcome.decision : null
      if (decision === null) throw new KinfError('internal', 'an embedding is decided at the edge')
      if (decision.kind !== 'serve') throw refusalOf(deps, snapshot, request, decision)
      const admitted = c.get('admitted')
      const serving: ServeContext = {
        requestId: c.get('requestId'),
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
      return serveEmbeddingDecision(deps, snapshot, request, decision, serving)
    },
  )
}
