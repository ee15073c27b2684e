import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { card, post, start } from '../../../support/embedded-stack.ts'

// Issue 26's live target, through the stack `npm start` runs (its demo policy's
// local-then-bedrock rule allows x-kinference-slo-ttft-ms, BurstOrShed): with the 27B pool
// busy (the load itself bursts once the pool saturates, so the pool is busy rather than
// drowned), a request whose objective its best pod is predicted to miss goes to the Bedrock
// stand-in at once, or, carrying personal data, is refused at once with 429 and
// Retry-After; never queued past its objective, and personal data never leaves.

const model = 'qwen3.8-27b-fp8'
const header = 'x-kinference-slo-ttft-ms'
const words = (seed: number, count: number) =>
  Array.from({ length: count }, (_, i) => `w${(seed * 7_919 + i * 104_729) % 99_991}`).join(' ')

const bedrockCalls = async (stack: EmbeddedStack) =>
  ((await (await fetch(`${stack.bedrock.url}/__fake/requests`)).json()) as { count: number }).count
const decisionOf = (response: Response) => response.headers.get('x-kinference-decision') ?? ''
const predictedOf = (response: Response) =>
  Number(/predicted_ttft_ms=(\d+)/.exec(decisionOf(response))?.[1] ?? Number.NaN)

describe('service levels through the npm start stack, its 27B pool busy', () => {
  let stack: EmbeddedStack
  const load = new AbortController()
  beforeAll(async () => {
    stack = await start()
  })
  afterAll(async () => {
    load.abort()
    await stack.close()
  })

  it('serves within the objective (a pod predicted to meet it, or Bedrock) or refuses at once with 429', async () => {
    // Long prompts with long answers keep both pods busy while the test runs.
    for (let i = 0; i < 24; i++)
      post(stack, {
        model,
        messages: [{ role: 'user', content: words(i, 1_500) }],
        max_tokens: 4_000,
        stream: true,
      }).then(
        (r) => r.body?.cancel(),
        () => {},
      )
    // What the pool predicts for one more request now, read from a request with the loosest
    // objective (served locally): well above the tightest objective a client may ask for
    // (100 ms), the pool is busy.
    let predicted = 0
    for (let tries = 0; tries < 50 && !(predicted > 200); tries++) {
      const probe = await post(
        stack,
        { model, messages: [{ role: 'user', content: words(900 + tries, 200) }], max_tokens: 2 },
        { [header]: '600000' },
      )
      expect(probe.status).toBe(200)
      predicted = predictedOf(probe)
      await probe.text()
    }
    expect(predicted).toBeGreaterThan(200)
    const objective = '100'
    const before = await bedrockCalls(stack)

    const burst = await post(
      stack,
      { model, messages: [{ role: 'user', content: words(1_000, 200) }], max_tokens: 4 },
      { [header]: objective },
    )
    expect(burst.status).toBe(200)
    expect(decisionOf(burst)).toContain('backend=demo/bedrock-claude')
    await burst.text()
    expect(await bedrockCalls(stack)).toBe(before + 1)

    const personal = await post(
      stack,
      {
        model,
        messages: [{ role: 'user', content: `${card} ${words(1_001, 200)}` }],
        max_tokens: 4,
      },
      { [header]: objective },
    )
    expect(personal.status).toBe(429)
    expect(Number(personal.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(((await personal.json()) as { error: { code: string } }).error.code).toBe(
      'slo_unattainable',
    )
    expect(await bedrockCalls(stack)).toBe(before + 1)
  })
})
