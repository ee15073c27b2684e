import { afterEach, describe, expect, it } from 'vitest'
import type { SimPod } from '../../../control-plane/lab/sim/sim-pod.ts'
import { createCompletionAssembler } from '../../../shared/openai/create-completion-assembler.ts'
import { parseOpenAiRequest, type RequestKind } from '../../../shared/openai/openai-request.ts'
import { model, text, usePods } from '../../support/sim-pods.ts'

const { pod } = usePods(afterEach)

const paths: Record<RequestKind, string> = {
  chat: '/v1/chat/completions',
  completion: '/v1/completions',
}

async function post(target: SimPod, kind: RequestKind, body: object): Promise<Response> {
  return fetch(`${target.url}${paths[kind]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, ...body }),
  })
}

/** The `data:` events of an SSE body, parsed, without `[DONE]`. */
function events(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .map((event) => event.replace(/^data: /, ''))
    .filter((data) => data !== '' && data !== '[DONE]')
    .map((data) => JSON.parse(data))
}

/** The request streamed as the edge will send it, its chunks assembled. */
async function streamedAndAssembled(target: SimPod, kind: RequestKind, body: object) {
  const parsed = parseOpenAiRequest(kind, { model, ...body })
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  const assembler = createCompletionAssembler(parsed.request)
  const response = await post(target, kind, {
    ...body,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  })
  const chunks = events(await response.text())
  for (const chunk of chunks) expect(assembler.add(chunk)).toBe(true)
  return { answer: assembler.result(), chunks }
}

interface Choice {
  index: number
  message?: { role: string; content: string | null }
  text?: string
  logprobs: unknown
  finish_reason: string
  stop_reason: unknown
}

/** What a choice says, in both kinds; the message's null extras differ by vLLM release. */
function said(choice: Choice) {
  const { index, message, text, logprobs, finish_reason, stop_reason } = choice
  const words = message ? { role: message.role, content: message.content } : { text }
  return { index, ...words, logprobs, finish_reason, stop_reason }
}

/**
 * Two pods with the same seed plan the same output for the same request: one answers it
 * unstreamed, the other streams it to the assembler. Asked twice, so the second answer
 * reports prefix-cache hits.
 */
async function compare(kind: RequestKind, body: object) {
  const plain = await pod({ podName: 'plain', seed: 11 })
  const streamed = await pod({ podName: 'streamed', seed: 11 })
  const finishes: string[] = []
  for (let round = 0; round < 2; round++) {
    const full = (await (await post(plain, kind, body)).json()) as Record<string, unknown>
    finishes.push(...(full.choices as Choice[]).map((choice) => choice.finish_reason))
    const { answer, chunks } = await streamedAndAssembled(streamed, kind, body)
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    expect(chunks.length).toBeGreaterThan(3)
    expect((answer.body.choices as Choice[]).map(said)).toEqual(
      (full.choices as Choice[]).map(said),
    )
    expect(answer.body).toMatchObject({ object: full.object, model: full.model })
    expect(answer.body.usage).toMatchObject(full.usage as object)
    expect(answer.usage).toMatchObject(full.usage as object)
  }
  return { streamed, finishes }
}

describe('createCompletionAssembler against the simulated vLLM pods', () => {
  it('a chat answer streamed and assembled is the one the pod gives unstreamed', async () => {
    const messages = [{ role: 'user', content: text(3, 120) }]
    // Room for the planned length: the model stops by itself (EOS), finish_reason stop.
    const { finishes } = await compare('chat', { messages, max_tokens: 2000 })
    expect(finishes).toContain('stop')
  })

  it('so is a completions answer, one cut at max_tokens', async () => {
    const { finishes } = await compare('completion', {
      prompt: text(4, 90),
      max_tokens: 12,
      ignore_eos: true,
    })
    expect(finishes).toEqual(['length', 'length'])
  })

  it('and one whose cached prefix shows in its usage', async () => {
    const messages = [{ role: 'user', content: text(5, 200) }]
    const { streamed } = await compare('chat', { messages, max_tokens: 8 })
    const { answer } = await streamedAndAssembled(streamed, 'chat', { messages, max_tokens: 8 })
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0)
  })
})
