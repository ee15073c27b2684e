import type { detectPii } from '../../../shared/pii/detect-pii.ts'
import { stageAttribute, stageSpanName } from '../../../shared/tracing/stage-spans.ts'
import type { EdgeRequest } from '../read-edge-request.ts'
import type { StageTrace } from './stage-span.ts'

/** What the scan found of a request (a completion's or an embedding's). */
type ScannedRequest = Pick<EdgeRequest, 'labels' | 'detectorFailed' | 'unreadable'>

/**
 * The PII scan's span, a child of the read stage's: the scan runs inside the body's
 * reading (read-edge-request.ts), so the detector is timed from its first call to its
 * last, and the span is written once the request is read, with what the scan found (label
 * names only, never the text). Without a trace the detector is used as it is.
 */
export function timedDetector(
  trace: StageTrace | undefined,
  detect: typeof detectPii,
  nowMs: () => number,
): { detect: typeof detectPii; record: (request: ScannedRequest | null) => void } {
  if (!trace) return { detect, record: () => undefined }
  let first: number | null = null
  let last = 0
  const timed: typeof detectPii = (text, options) => {
    first ??= nowMs()
    try {
      return detect(text, options)
    } finally {
      last = nowMs()
    }
  }
  const record = (request: ScannedRequest | null) => {
    if (first === null) return
    const span = trace.scope.tracer.startSpan(
      stageSpanName('pii'),
      {
        startTime: first,
        attributes: {
          [stageAttribute]: 'pii',
          ...(request && {
            'kinference.pii.labels': request.labels.filter((label) => label.startsWith('pii')),
            'kinference.pii.detector_failed': request.detectorFailed,
            'kinference.pii.unreadable': request.unreadable !== null,
          }),
        },
      },
      trace.scope.parent,
    )
    span.end(last)
  }
  return { detect: timed, record }
}
