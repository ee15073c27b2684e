import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { post, start } from '../../../support/embedded-stack.ts'

/** The sum of a counter over its series in the scorer's /metrics. */
async function total(stack: EmbeddedStack, name: string): Promise<number> {
  const text = await (await fetch(`${stack.scorer.metricsUrl}/metrics`)).text()
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}

async function work(stack: EmbeddedStack) {
  return {
    tokenizations: await total(stack, 'kinference_scorer_tokenizations_total'),
    lookups: await total(stack, 'kinference_scorer_index_lookups_total'),
  }
}

describe('one edge → scorer pass per request', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start()
  })
  afterAll(() => stack.close())

  // The demo policy: qwen3.8-27b-fp8 bursts when its pool is saturated (status-dependent,
  // one pool); auto prefers the cheaper pool unless the bigger one is predicted faster
  // (status-dependent, two pools sharing a tokenizer); gpt-4o is an alias routed locally.
  it.each([
    ['qwen3.8-27b-fp8', 1],
    ['auto', 2],
    ['gpt-4o', 1],
  ])(
    '%s: the scorer tokenizes the prompt once and looks it up once per pool asked',
    async (model, pools) => {
      const before = await work(stack)
      const requests = 3
      for (let i = 0; i < requests; i++) {
        const response = await post(stack, {
          model,
          messages: [{ role: 'user', content: `count me ${model} ${i}` }],
          max_tokens: 2,
        })
        expect(response.status).toBe(200)
        await response.text()
      }
      const after = await work(stack)
      expect(after.tokenizations - before.tokenizations).toBe(requests)
      expect(after.lookups - before.lookups).toBe(requests * pools)
    },
  )
})
