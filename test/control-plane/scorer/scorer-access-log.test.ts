import { describe, expect, it } from 'vitest'
import { standInUsage } from '../../support/recording-vllm-pod.ts'
import { fetchSigned, model, until } from '../../support/scorer-stack.ts'
import { chat, edgeTraceparent, tracedScorer } from '../../support/traced-scorer.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// The scorer's JSON log lines: one access line per request (kind "access", info), written
// once its answer ended; and, without a tracer, no spans and the client's trace context
// passed on to the pod as it came.

const stacks = useScorerStacks()

describe('the scorer without a tracer', () => {
  it('makes no spans and passes the client’s traceparent to the pod unchanged', async () => {
    const traced = await tracedScorer(stacks, { traced: false })
    const answer = await fetchSigned(
      traced.stack,
      '/v1/chat/completions',
      chat(true),
      {},
      { headers: { traceparent: edgeTraceparent, tracestate: 'edge=1' } },
    )
    expect(answer.status).toBe(200)
    await answer.text()
    await until(() => traced.lines.some((line) => line.fields.kind === 'access'))
    expect(traced.spans()).toEqual([])
    expect(traced.pods[0]?.received[0]?.headers.traceparent).toBe(edgeTraceparent)
    expect(traced.pods[0]?.received[0]?.headers.tracestate).toBe('edge=1')
  })
})

describe('the scorer’s access line', () => {
  it('is one info line per request once its answer ended, with what it cost', async () => {
    const traced = await tracedScorer(stacks, { traced: false })
    const answer = await fetchSigned(traced.stack, '/v1/chat/completions', chat(true), {
      requestId: 'req-logged',
      tenant: 'acme',
    })
    await answer.text()
    await until(() => traced.lines.some((line) => line.fields.kind === 'access'))
    const access = traced.lines.filter((line) => line.fields.kind === 'access')
    expect(access).toHaveLength(1)
    const fields = access[0]?.fields ?? {}
    expect(fields).toMatchObject({
      level: 'info',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      request_id: 'req-logged',
      tenant: 'acme',
      model,
      pool: 'default',
      pod: 'pod-0',
      answered_by: 'pod',
      prompt_tokens: standInUsage.prompt,
      cached_tokens: standInUsage.cached,
      completion_tokens: standInUsage.completion,
      complete: true,
    })
    // Not traced here: no trace id.
    expect(fields.trace_id).toBeUndefined()
    expect(fields.duration_ms).toBeGreaterThanOrEqual(0)
    expect(fields.ttft_ms).toBeGreaterThanOrEqual(0)
    expect(fields.ttft_ms).toBeLessThanOrEqual(Number(fields.duration_ms))
  })

  it('is written for a refused request too, with its status', async () => {
    const traced = await tracedScorer(stacks, { traced: false })
    const answer = await fetchSigned(
      traced.stack,
      '/v1/chat/completions',
      { ...chat(false), model: 'nope' },
      { requestId: 'req-refused' },
    )
    expect(answer.status).toBe(404)
    await answer.text()
    await until(() => traced.lines.some((line) => line.fields.kind === 'access'))
    expect(traced.lines.find((line) => line.fields.kind === 'access')?.fields).toMatchObject({
      level: 'info',
      status: 404,
      request_id: 'req-refused',
    })
  })
})
