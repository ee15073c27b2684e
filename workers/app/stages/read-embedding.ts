import { detectPii } from '../../../shared/pii/detect-pii.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import type { EdgeDeps, EdgeLimits } from '../edge-deps.ts'
import { readBodyText } from '../read-edge-request.ts'
import { type EmbeddingEdgeRequest, readEmbeddingRequest } from '../read-embedding-request.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'
import { timedDetector } from './pii-scan-span.ts'

/**
 * readRequest's counterpart for POST /v1/embeddings: the body read (413 past maxBodyBytes),
 * parsed and labelled (read-embedding-request.ts), the PII scan in its span.
 */
export function readEmbedding(
  deps: Pick<EdgeDeps, 'metrics' | 'detectPii' | 'nowMs'>,
  limits: EdgeLimits,
): EdgeStage<'snapshot' | 'identity', 'embedding'> {
  return edgeStage(
    'readEmbedding',
    { reads: ['snapshot', 'identity'], sets: ['embedding'], span: 'read' },
    async (c, next, trace) => {
      const raw = c.req.raw
      const text = await readBodyText(raw, limits.maxBodyBytes)
      const scan = timedDetector(trace, deps.detectPii ?? detectPii, deps.nowMs)
      let request: EmbeddingEdgeRequest | null = null
      try {
        request = readEmbeddingRequest(
          c.get('snapshot'),
          c.get('identity'),
          text,
          raw.headers.get(kinferenceHeaders.labels) ?? undefined,
          deps.metrics,
          scan.detect,
          limits,
        )
      } finally {
        scan.record(request)
      }
      c.set('embedding', request)
      await next()
    },
  )
}
