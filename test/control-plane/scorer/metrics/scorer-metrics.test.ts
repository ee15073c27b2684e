import { describe, expect, it } from 'vitest'
import {
  decisionOf,
  send,
  systemChat,
  metricTotal as total,
  until,
  words,
} from '../../../support/scorer-stack.ts'
import { useScorerStacks } from '../../../support/use-scorer-stacks.ts'

const chat = (system: string, question: string, stream = false) =>
  systemChat(system, question, { stream })

describe("the scorer's /metrics", () => {
  const stacks = useScorerStacks()

  it('gives TTFT, e2e, prediction error and hit rate by pool, for the requests sent', async () => {
    const stack = await stacks.start({ pods: 2 })
    const system = words(11, 400)
    const first = await send(stack, '/v1/chat/completions', chat(system, 'one', true))
    const pod = decisionOf(first.headers).pod as string
    await until(
      async () => (await total(stack, 'kinference_scorer_event_batches_total', { pod })) > 0,
    )
    await send(stack, '/v1/chat/completions', chat(system, 'two', true))
    await send(stack, '/v1/chat/completions', chat(system, 'three'))
    const pool = { pool: 'default' }
    expect(await total(stack, 'kinference_scorer_ttft_seconds_count', pool)).toBe(2)
    expect(await total(stack, 'kinference_scorer_ttft_prediction_error_ratio_count', pool)).toBe(2)
    expect(await total(stack, 'kinference_scorer_e2e_seconds_count', pool)).toBe(3)
    const prompt = await total(stack, 'kinference_scorer_prompt_tokens_total', pool)
    const matched = await total(stack, 'kinference_scorer_matched_tokens_total', pool)
    expect(matched).toBeGreaterThan(0) // the later requests found the first one's prefix
    expect(matched).toBeLessThan(prompt)
  })

  it("follows the pods' KV-event counts: batches, the start's replay, a restart", async () => {
    const stack = await stacks.start({ pods: 1 })
    const pod = stack.pods[0]?.config.podName as string
    const of = (kind: string) =>
      total(stack, 'kinference_scorer_event_problems_total', { pod, kind })
    expect(await of('replay')).toBeGreaterThanOrEqual(1)
    expect(await of('restart')).toBe(0)
    await send(stack, '/v1/chat/completions', chat(words(12, 300), 'q'))
    await until(
      async () => (await total(stack, 'kinference_scorer_event_batches_total', { pod })) > 0,
    )
    await until(
      () =>
        stack.scorer.pools[0]?.router
          .podReports(performance.now())
          .every((r) => r.metrics !== null) ?? false,
    )
    const batches = await total(stack, 'kinference_scorer_event_batches_total', { pod })
    await fetch(`${stack.pods[0]?.url}/admin/restart`, { method: 'POST' })
    await send(stack, '/v1/chat/completions', chat(words(13, 300), 'q'))
    await until(async () => (await of('restart')) >= 1)
    // A counter never goes back, whatever the ingestor's own numbers did.
    expect(
      await total(stack, 'kinference_scorer_event_batches_total', { pod }),
    ).toBeGreaterThanOrEqual(batches)
  })
})
