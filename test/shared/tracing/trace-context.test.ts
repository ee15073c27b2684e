import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
} from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { describe, expect, it } from 'vitest'
import {
  contextOfHeaders,
  formatTraceparent,
  parseTraceparent,
} from '../../../shared/tracing/trace-context.ts'

/**
 * W3C Trace Context as the edge and the scorer read and write it, checked against
 * OpenTelemetry's own propagator (@opentelemetry/core), an implementation independent of
 * shared/tracing/trace-context.ts, on the recommendation's examples and malformed headers.
 */
const propagator = new W3CTraceContextPropagator()

/** What the reference propagator reads from a traceparent: its span context, or null. */
function reference(traceparent: string, tracestate?: string): SpanContext | null {
  const carrier: Record<string, string> = { traceparent }
  if (tracestate !== undefined) carrier.tracestate = tracestate
  const context = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter)
  return trace.getSpanContext(context) ?? null
}

const valid = [
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
  // A later version: read on its first four fields, what follows ignored.
  '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next',
  // Flags other than sampled are not carried on.
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03',
]

const invalid = [
  '',
  'garbage',
  // Version ff is forbidden.
  'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  // All-zero ids are invalid.
  '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
  '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
  // Upper case hex is not the format.
  '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01',
  // Wrong lengths.
  '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01',
  // Version 00 has exactly four fields.
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
]

describe('W3C traceparent', () => {
  it.each(valid)('reads %s as the reference propagator does', (header) => {
    const ours = parseTraceparent(header)
    const theirs = reference(header)
    expect(theirs).not.toBeNull()
    expect(ours).toMatchObject({
      traceId: theirs?.traceId,
      spanId: theirs?.spanId,
      traceFlags: (theirs?.traceFlags ?? 0) & 1,
      isRemote: true,
    })
  })

  it.each(invalid)('refuses %j, as the reference propagator does', (header) => {
    expect(parseTraceparent(header)).toBeNull()
    expect(reference(header)).toBeNull()
  })

  it('writes what the reference propagator writes for the same span, and reads it back', () => {
    const span: SpanContext = {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
    }
    const carrier: Record<string, string> = {}
    propagator.inject(trace.setSpanContext(ROOT_CONTEXT, span), carrier, defaultTextMapSetter)
    expect(formatTraceparent(span)).toBe(carrier.traceparent)
    expect(parseTraceparent(formatTraceparent(span))).toMatchObject(span)
  })

  it('carries tracestate on as received, and gives no parent without a traceparent', () => {
    const headers: Record<string, string> = {
      traceparent: valid[0] as string,
      tracestate: 'vendor=abc,other=1',
    }
    const parent = trace.getSpanContext(contextOfHeaders((name) => headers[name]))
    expect(parent?.traceState?.serialize()).toBe('vendor=abc,other=1')
    expect(trace.getSpanContext(contextOfHeaders(() => undefined))).toBeUndefined()
  })
})
