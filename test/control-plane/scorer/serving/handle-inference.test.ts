import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { passThrough } from '../../../../control-plane/scorer/serving/handle-inference.ts'
import { model, type Stack, send, startStack } from '../../../support/scorer-stack.ts'

const path = '/v1/chat/completions'
const chat = (content: string) =>
  JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content }] })

describe('the x-request-id a pod gets', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ pods: 1 })
  }, 60_000)
  afterAll(() => stack.close())

  /** A request as the edge forwards it, its own id signed; the sim pod echoes what it got. */
  const forward = async (clientId: string) => {
    const edgeId = `edge-${crypto.randomUUID()}`
    const answer = await send(
      stack,
      path,
      chat('which id?'),
      { requestId: edgeId },
      {
        headers: { 'x-request-id': clientId },
      },
    )
    return { ...answer, edgeId, podGot: answer.headers.get('x-request-id') }
  }

  it('is the client’s when it is a request id: up to 128 printable ASCII characters', async () => {
    const id = `client-${'x'.repeat(121)}`
    expect(id).toHaveLength(128)
    const { status, podGot } = await forward(id)
    expect(status).toBe(200)
    expect(podGot).toBe(id)
  })

  it('is the request’s own instead of a 32 KiB one, which the pod would answer 431', async () => {
    const { status, podGot, edgeId } = await forward('r'.repeat(32 * 1024))
    expect(status).toBe(200)
    expect(podGot).toBe(edgeId)
  })

  it('is the request’s own instead of one with C1 control characters', async () => {
    const { status, podGot, edgeId } = await forward('id\u009b31m\u0085')
    expect(status).toBe(200)
    expect(podGot).toBe(edgeId)
  })
})

describe('passThrough', () => {
  const request = (headers: Record<string, string>) => ({
    method: 'POST',
    path,
    headers: (name: string) => headers[name],
    body: Buffer.alloc(0),
    requestId: 'own-id',
  })

  it('passes trace context and accept when short printable text, and always an x-request-id', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    expect(passThrough(request({ traceparent, accept: 'text/event-stream' }))).toEqual({
      traceparent,
      accept: 'text/event-stream',
      'x-request-id': 'own-id',
    })
    expect(
      passThrough(
        request({ traceparent: 't'.repeat(513), tracestate: 'a=\u0085', 'x-request-id': 'a b' }),
      ),
    ).toEqual({ 'x-request-id': 'own-id' })
  })
})
