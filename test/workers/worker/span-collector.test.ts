import { AlwaysOnSampler, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace'
import { describe, expect, it } from 'vitest'
import { createSpanCollector } from '../../../workers/worker/span-collector.ts'

function tracerWith(collector: ReturnType<typeof createSpanCollector>, sampled = true) {
  return new TracerProvider({
    sampler: sampled ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(0),
    spanProcessors: [collector],
  }).getTracer('test')
}

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(() => {
    done = true
  })
  for (let turn = 0; turn < 5; turn++) await Promise.resolve()
  return done
}

describe('createSpanCollector', () => {
  it('hands over the ended spans once, in the order they ended', () => {
    const collector = createSpanCollector()
    const tracer = tracerWith(collector)
    tracer.startSpan('first').end()
    tracer.startSpan('second').end()
    expect(collector.take().spans.map((span) => span.name)).toEqual(['first', 'second'])
    expect(collector.take()).toEqual({ spans: [], dropped: 0 })
  })

  it('waits for the spans open when asked, not for those started later', async () => {
    const collector = createSpanCollector()
    const tracer = tracerWith(collector)
    const request = tracer.startSpan('request')
    const stage = tracer.startSpan('stage')
    const waiting = collector.openSpansEnded()
    const later = tracer.startSpan('a later request')
    stage.end()
    expect(await settled(waiting)).toBe(false)
    request.end()
    expect(await settled(waiting)).toBe(true)
    expect(collector.take().spans.map((span) => span.name)).toEqual(['stage', 'request'])
    later.end()
    expect(await settled(collector.openSpansEnded())).toBe(true)
  })

  it('keeps no span a sampler dropped', () => {
    const collector = createSpanCollector()
    tracerWith(collector, false).startSpan('unsampled').end()
    expect(collector.take().spans).toEqual([])
  })

  it('holds at most its limit and counts the spans it dropped', () => {
    const collector = createSpanCollector(2)
    const tracer = tracerWith(collector)
    for (const name of ['a', 'b', 'c', 'd']) tracer.startSpan(name).end()
    const taken = collector.take()
    expect(taken.spans.map((span) => span.name)).toEqual(['a', 'b'])
    expect(taken.dropped).toBe(2)
  })
})
