import { describe, expect, it } from 'vitest'
import { model, send } from '../../../support/scorer-stack.ts'
import { useSharedStack } from '../../../support/use-scorer-stacks.ts'

const path = '/v1/chat/completions'
const chat = (content: string) =>
  JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content }] })

describe('the x-request-id a pod gets', () => {
  const stack = useSharedStack({ pods: 1 })

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
