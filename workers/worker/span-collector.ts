import { TraceFlags } from '@opentelemetry/api'
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace'

/**
 * A span processor that keeps the isolate's ended, sampled spans until they are taken, and
 * knows which spans are still open: a Worker cannot export on a timer between requests, so
 * each request exports, from its waitUntil, once the spans open at its end have ended (a
 * streamed answer ends its spans after the Response is returned).
 */
export interface SpanCollector extends SpanProcessor {
  /** Resolves once every span open now has ended (spans started later are not awaited). */
  openSpansEnded(): Promise<void>
  /** The spans ended so far, removed from the collector, and how many were dropped since. */
  take(): { spans: ReadableSpan[]; dropped: number }
}

/** Spans held at most; beyond, while exports fail or lag, new spans are dropped and counted. */
export const maxCollectedSpans = 4_096

export function createSpanCollector(maxSpans = maxCollectedSpans): SpanCollector {
  const open = new Map<ReadableSpan, { ended: Promise<void>; end: () => void }>()
  let spans: ReadableSpan[] = []
  let dropped = 0
  return {
    onStart(span: Span) {
      let end = () => {}
      const ended = new Promise<void>((resolve) => {
        end = resolve
      })
      open.set(span, { ended, end })
    },
    onEnd(span: ReadableSpan) {
      open.get(span)?.end()
      open.delete(span)
      // Recorded but not sampled (a sampler's RECORD_ONLY): kept out of the export.
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return
      if (spans.length < maxSpans) spans.push(span)
      else dropped++
    },
    async openSpansEnded() {
      await Promise.all([...open.values()].map((entry) => entry.ended))
    },
    take() {
      const taken = { spans, dropped }
      spans = []
      dropped = 0
      return taken
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  }
}
