import { maxTtftObjectiveMs, sloTtftHeader } from '../../../shared/crd/service-level.ts'
import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import { detectPii } from '../../../shared/pii/detect-pii.ts'
import { readObjectiveHeader } from '../../../shared/policy/read-objective-header.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import type { EdgeDeps, EdgeLimits } from '../edge-deps.ts'
import { type EdgeRequest, readBodyText, readEdgeRequest } from '../read-edge-request.ts'
import { type EdgeStage, edgeStage } from './edge-stage.ts'
import { timedDetector } from './pii-scan-span.ts'

/**
 * Stage 4: the body read (413 past maxBodyBytes), parsed, held to the limits, and labelled:
 * the client's labels plus what the PII detectors find (read-edge-request.ts), and its TTFT
 * objective when it names one (read-objective-header.ts: 400 when malformed).
 */
export function readRequest(
  kind: RequestKind,
  deps: Pick<EdgeDeps, 'metrics' | 'detectPii' | 'nowMs'>,
  limits: EdgeLimits,
): EdgeStage<'snapshot' | 'identity', 'request'> {
  return edgeStage(
    'readRequest',
    { reads: ['snapshot', 'identity'], sets: ['request'], span: 'read' },
    async (c, next, trace) => {
      const raw = c.req.raw
      const text = await readBodyText(raw, limits.maxBodyBytes)
      const scan = timedDetector(trace, deps.detectPii ?? detectPii, deps.nowMs)
      let request: EdgeRequest | null = null
      try {
        request = readEdgeRequest(
          c.get('snapshot'),
          kind,
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
      const sloTtftMs = readObjectiveHeader(
        sloTtftHeader,
        raw.headers.get(sloTtftHeader),
        maxTtftObjectiveMs,
      )
      c.set('request', sloTtftMs === undefined ? request : { ...request, sloTtftMs })
      await next()
    },
  )
}
