import { describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import { model, send, until } from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const stacks = useScorerStacks()

/** Whether the pod's /metrics count a request running (the stream is under way). */
async function podRunsOne(pod: SimPod | undefined): Promise<boolean> {
  if (!pod) return false
  const text = await (await fetch(`${pod.url}/metrics`)).text()
  return /^vllm:num_requests_running\{[^}]*\} 1(\.0)?$/m.test(text)
}

const chat = (maxTokens: number) => ({
  model,
  stream: true,
  max_tokens: maxTokens,
  ignore_eos: true,
  messages: [{ role: 'user', content: 'Tell me a long story about a drain.' }],
})

describe('the scorer drains before it stops', () => {
  it('lets a stream in flight finish and refuses new connections meanwhile', async () => {
    const stack = await stacks.start({ pods: 1 })
    const { scorer } = stack
    const streaming = send(stack, '/v1/chat/completions', chat(400))
    await until(() => podRunsOne(stack.pods[0]))
    let closed = false
    const closing = scorer.close({ drainMs: 20_000 }).then(() => {
      closed = true
    })
    // Probes read /health on the metrics listener: 503 from the start of the drain.
    expect((await fetch(`${scorer.metricsUrl}/health`)).status).toBe(503)
    await until(async () => (await fetch(scorer.url).catch(() => null)) === null)
    expect(closed).toBe(false)
    const answer = await streaming
    expect(answer.status).toBe(200)
    expect(answer.text).toContain('"finish_reason":"length"')
    expect(answer.text.trim().endsWith('data: [DONE]')).toBe(true)
    await closing
  })

  it('stops at the deadline with what is still in flight cut', async () => {
    const stack = await stacks.start({ pods: 1 })
    const streaming = send(stack, '/v1/chat/completions', chat(4000)).catch((error: Error) => error)
    await until(() => podRunsOne(stack.pods[0]))
    const started = performance.now()
    await stack.scorer.close({ drainMs: 300 })
    expect(performance.now() - started).toBeLessThan(5_000)
    const outcome = await streaming
    const text = outcome instanceof Error ? '' : outcome.text
    expect(text).not.toContain('data: [DONE]')
  })
})
