import { describe, expect, it } from 'vitest'
import { signEdgeRequest } from '../../../shared/auth/edge-signature.ts'
import { model, secret } from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const stacks = useScorerStacks()

describe('the scorer refuses a replayed edge request', () => {
  it('serves a signed request once; the same bytes and headers again are refused', async () => {
    const stack = await stacks.start({ pods: 1 })
    const path = '/v1/chat/completions'
    const body = JSON.stringify({
      model,
      max_tokens: 2,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const headers = await signEdgeRequest(
      secret,
      { method: 'POST', path, body, nonce: crypto.randomUUID() },
      { tenant: 't', labels: [], backends: [], allowBurst: false },
      Date.now() / 1000,
    )
    const send = () =>
      fetch(`${stack.scorer.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      })
    expect((await send()).status).toBe(200)
    const replayed = await send()
    expect(replayed.status).toBe(401)
    expect(await replayed.text()).toContain('replayed nonce')
  })
})
