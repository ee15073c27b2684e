import { describe, expect, it } from 'vitest'
import {
  decidedHeader,
  promptTokensHeader,
  RouteDecision,
  routePaths,
} from '../../../shared/scorer-api/route-protocol.ts'
import { routeOnPlatform } from '../../support/route-platform.ts'
import { decisionOf, model, poolSpec, send } from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const stacks = useScorerStacks()

const chat = (content: string, extra: object = {}) => ({
  model,
  messages: [{ role: 'user', content }],
  max_tokens: 2,
  ...extra,
})

const decided = (answer: { headers: Headers; text: string }) => {
  expect(answer.headers.get(decidedHeader)).toBe('1')
  return RouteDecision.parse(JSON.parse(answer.text))
}

describe('POST /v1/kinference/route: policy and request in one pass', () => {
  it('decides on the pool’s status and serves the local attempt itself, the whole decision in the header', async () => {
    const stack = await stacks.start()
    const answer = await routeOnPlatform(stack, chat('hello there'))
    expect(answer.status).toBe(200)
    expect(answer.headers.get(decidedHeader)).toBeNull()
    const decision = decisionOf(answer.headers)
    expect(decision).toMatchObject({ policy: 'test/policy', rule: 'burst', backend: 'test/local' })
    expect(decision.pod).toMatch(/^sim-pod-/)
    expect(Number(answer.headers.get(promptTokensHeader))).toBeGreaterThan(5)
    expect(JSON.parse(answer.text).usage.prompt_tokens).toBe(
      Number(answer.headers.get(promptTokensHeader)),
    )
  })

  it('answers the decision when it is not the pool’s to serve: a rejection, or bursting past a saturated pool', async () => {
    const stack = await stacks.start({ spec: poolSpec({ ttftSloMs: 0.001 }) })
    const refused = decided(await routeOnPlatform(stack, chat('x', { model: 'nope' })))
    expect(refused).toMatchObject({ from: 0, decision: { kind: 'reject', status: 403 } })
    // The pool is over its TTFT limit for every prompt: burst, external first.
    const burst = decided(await routeOnPlatform(stack, chat('overflow')))
    expect(burst.decision.kind).toBe('serve')
    if (burst.decision.kind !== 'serve') return
    expect(burst.decision.attempts[burst.from]?.backend).toBe('test/claude')
    expect(burst.promptTokens).toBeGreaterThan(5)
  })

  it('never lets a labelled request leave: past the saturated pool there is nothing left to try', async () => {
    const stack = await stacks.start({ spec: poolSpec({ ttftSloMs: 0.001 }) })
    for (const claims of [{ labels: ['pii'] }, { detectorFailed: true }]) {
      const held = decided(
        await routeOnPlatform(stack, chat('my card is 4111 1111 1111 1111'), claims),
      )
      expect(held.decision.kind).toBe('serve')
      if (held.decision.kind !== 'serve') continue
      expect(held.decision.attempts.every((a) => a.locality === 'InCluster')).toBe(true)
      expect(held.from).toBe(held.decision.attempts.length)
      expect(held.notes).toEqual(['test/local: saturated'])
    }
  })

  it('refuses a malformed call with a 400 and keeps serving', async () => {
    const stack = await stacks.start()
    const noNewline = await send(stack, routePaths.chat, JSON.stringify(chat('x')), {
      tenant: 'acme',
    })
    expect(noNewline.status).toBe(400)
    expect(JSON.parse(noNewline.text).error.message).toContain('policy bundle')
    const badBundle = await routeOnPlatform(stack, chat('x'), {}, '{"kind":"nope"}')
    expect(badBundle.status).toBe(400)
    const badBody = await routeOnPlatform(stack, '{"model":')
    expect(badBody.status).toBe(400)
    const noModel = await routeOnPlatform(stack, { messages: [{ role: 'user', content: 'x' }] })
    expect(JSON.parse(noModel.text).error.param).toBe('model')
    expect((await routeOnPlatform(stack, chat('still here'))).status).toBe(200)
  })
})
