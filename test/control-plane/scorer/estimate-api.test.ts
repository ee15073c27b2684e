import { afterEach, describe, expect, it } from 'vitest'
import {
  type PoolEstimateResponse,
  poolEstimatePath,
} from '../../../shared/scorer-api/pool-estimate.ts'
import {
  model,
  poolSpec,
  type Stack,
  send,
  startStack,
  until,
  words,
} from '../../support/scorer-stack.ts'

let stack: Stack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const messages = (system: string, question: string) => [
  { role: 'system', content: system },
  { role: 'user', content: question },
]

const estimate = async (body: object) => {
  const response = await send(stack as Stack, poolEstimatePath, body)
  return { status: response.status, json: JSON.parse(response.text) as PoolEstimateResponse }
}

describe('POST /v1/kinference/estimate', () => {
  it('reports the exact prompt length, the warm pod and a lower TTFT once a prefix is cached', async () => {
    stack = await startStack()
    const system = words(1, 600)
    const body = { kind: 'chat', body: { messages: messages(system, 'q0') } }
    const targets = [{ pool: 'default', model }]
    const cold = await estimate({ ...body, targets })
    expect(cold.status).toBe(200)
    const before = cold.json.results[0]?.estimate
    expect(before?.matchedTokens).toBe(0)
    expect(before?.promptTokens).toBeGreaterThan(600)
    expect(before?.saturated).toBe(false)
    const served = await send(stack, '/v1/chat/completions', {
      model,
      messages: messages(system, 'q1'),
      max_tokens: 2,
    })
    expect(served.status).toBe(200)
    let after = before
    await until(async () => {
      after = (await estimate({ ...body, targets })).json.results[0]?.estimate ?? undefined
      return (after?.matchedTokens ?? 0) > 500
    })
    expect(after?.predictedTtftMs).toBeLessThan(before?.predictedTtftMs ?? 0)
    expect(after?.promptTokens).toBe(before?.promptTokens)
  })

  it('calls a pool saturated when every pod is over its TTFT limit, and dispatches nothing', async () => {
    stack = await startStack({ spec: poolSpec({ ttftSloMs: 0.001 }) })
    const { json } = await estimate({
      kind: 'completion',
      body: { prompt: 'hello there' },
      targets: [{ pool: 'default', model }],
    })
    expect(json.results[0]?.estimate?.saturated).toBe(true)
    expect(json.results[0]?.estimate?.saturation).toBeGreaterThan(1)
    for (const pod of stack.scorer.pools[0]?.router.podReports(performance.now()) ?? [])
      expect(pod.load.inFlight).toBe(0)
  })

  it('names the targets it cannot estimate instead of failing the others', async () => {
    stack = await startStack()
    const { status, json } = await estimate({
      kind: 'chat',
      body: { messages: messages('s', 'q') },
      targets: [
        { pool: 'default', model },
        { pool: 'elsewhere', model },
        { pool: 'default', model: 'no-such-model' },
      ],
    })
    expect(status).toBe(200)
    expect(json.results.map((r) => [r.pool, r.estimate !== null])).toEqual([
      ['default', true],
      ['elsewhere', false],
      ['default', false],
    ])
    expect(json.results[1]?.error).toMatch(/not served/)
    expect(json.results[2]?.error).toMatch(/does not exist/)
  })

  it('refuses unsigned and malformed estimates', async () => {
    stack = await startStack()
    const unsigned = await fetch(`${stack.scorer.url}${poolEstimatePath}`, {
      method: 'POST',
      body: '{}',
    })
    expect(unsigned.status).toBe(401)
    const bad = await send(stack, poolEstimatePath, { kind: 'chat', targets: [] })
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.text).error.type).toBe('invalid_request_error')
    const notJson = await send(stack, poolEstimatePath, '{"kind":')
    expect(notJson.status).toBe(400)
  })
})
