import { describe, expect, it } from 'vitest'
import { passThroughHeaders } from '../../../shared/attempts/pass-through-headers.ts'

describe('passThroughHeaders', () => {
  const from = (headers: Record<string, string>) => (name: string) => headers[name]

  it('passes trace context and accept when short printable text, and always an x-request-id', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    expect(
      passThroughHeaders(from({ traceparent, accept: 'text/event-stream' }), 'own-id'),
    ).toEqual({ traceparent, accept: 'text/event-stream', 'x-request-id': 'own-id' })
    expect(
      passThroughHeaders(
        from({ traceparent: 't'.repeat(513), tracestate: 'a=\u0085', 'x-request-id': 'a b' }),
        'own-id',
      ),
    ).toEqual({ 'x-request-id': 'own-id' })
  })

  it('keeps the client’s x-request-id when it is a request id, and passes nothing else', () => {
    const headers = new Headers({ 'x-request-id': 'client-7', cookie: 'secret', tracestate: 'a=1' })
    expect(passThroughHeaders((name) => headers.get(name), 'own-id')).toEqual({
      tracestate: 'a=1',
      'x-request-id': 'client-7',
    })
  })
})
