import { describe, expect, it } from 'vitest'
import { createCompletionAssembler } from '../../../shared/openai/create-completion-assembler.ts'
import { type OpenAiRequest, parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import { type VllmStreamPair, vllmStreamPairs } from '../../support/vllm-stream-pairs.ts'

function requestOf(kind: 'chat' | 'completion', body: Record<string, unknown>): OpenAiRequest {
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  return parsed.request
}

function assembled(pair: VllmStreamPair) {
  const assembler = createCompletionAssembler(requestOf(pair.kind, pair.request))
  for (const chunk of pair.chunks) assembler.add(chunk)
  return assembler.result()
}

/** Two calls differ in their ids and clocks; nothing else may. */
function withoutIdentity(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIdentity)
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (key !== 'id' && key !== 'created') out[key] = withoutIdentity(field)
  }
  return out
}

/** vLLM's final usage chunk drops null fields that its full answer writes. */
function withoutNulls(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== null)
      .map(([key, field]) => [key, withoutNulls(field)]),
  )
}

describe('createCompletionAssembler against recorded vLLM stream and full answers', () => {
  for (const pair of vllmStreamPairs.filter((p) => p.full.status === 200)) {
    it(`gives vLLM's full answer: ${pair.name}`, () => {
      const answer = assembled(pair)
      if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
      const { usage, ...rest } = answer.body
      const { usage: fullUsage, ...fullRest } = pair.full.body
      expect(withoutIdentity(rest)).toEqual(withoutIdentity(fullRest))
      expect(withoutNulls(usage)).toEqual(withoutNulls(fullUsage))
      // The stream's own ids, not invented ones.
      expect(answer.body.id).toBe(pair.chunks[0]?.id)
      expect(answer.usage?.total_tokens).toBe((fullUsage as { total_tokens: number }).total_tokens)
    })
  }

  it('answers an error event with its status and body, as vLLM answers unstreamed', () => {
    const pair = vllmStreamPairs.find((p) => p.full.status !== 200)
    if (!pair) throw new Error('no error pair')
    expect(assembled(pair)).toEqual({
      type: 'upstream_error',
      status: pair.full.status,
      body: pair.full.body,
    })
  })

  it('keeps the fields vLLM sends once: prompt_token_ids and prompt_text first, fingerprint and metrics last', () => {
    const head = { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 5, model: 'm' }
    const assembler = createCompletionAssembler(
      requestOf('chat', { messages: [{ role: 'user', content: 'Hi' }], return_token_ids: true }),
    )
    assembler.add({
      ...head,
      prompt_token_ids: [1, 2],
      prompt_text: '<|im_start|>user\nHi',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    })
    assembler.add({
      ...head,
      choices: [{ index: 0, delta: { content: 'Yo' }, finish_reason: 'stop', token_ids: [7, 8] }],
    })
    const usage = { prompt_tokens: 2, total_tokens: 4, completion_tokens: 2 }
    const metrics = { time_to_first_token_ms: 12.5 }
    assembler.add({ ...head, choices: [], usage, system_fingerprint: 'fp-1', metrics })
    const answer = assembler.result()
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    expect(answer.body).toMatchObject({
      prompt_token_ids: [1, 2],
      prompt_text: '<|im_start|>user\nHi',
      system_fingerprint: 'fp-1',
      metrics,
      usage,
      choices: [{ message: { content: 'Yo' }, token_ids: [7, 8] }],
    })
  })

  it('answers content "" for a required or named tool choice that streamed no content', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }]
    const chunks = [
      { index: 0, delta: { role: 'assistant', content: '' } },
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f' } }] },
      },
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] } },
      { index: 0, delta: {}, finish_reason: 'tool_calls' },
    ]
    const contentFor = (toolChoice: unknown) => {
      const assembler = createCompletionAssembler(
        requestOf('chat', {
          messages: [{ role: 'user', content: 'Hi' }],
          tools,
          tool_choice: toolChoice,
        }),
      )
      for (const choice of chunks)
        assembler.add({ id: 'c', created: 1, model: 'm', choices: [choice] })
      const answer = assembler.result()
      if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
      return (answer.body.choices as { message: { content: unknown } }[])[0]?.message.content
    }
    expect(contentFor('auto')).toBeNull()
    expect(contentFor('required')).toBe('')
    expect(contentFor({ type: 'function', function: { name: 'f' } })).toBe('')
  })

  it('tells the tokens used so far at every chunk: n = 2 sums each choice’s last count', () => {
    const pair = vllmStreamPairs.find((p) => p.name.includes('n = 2 interleaved, logprobs'))
    if (!pair) throw new Error('no n = 2 pair')
    const assembler = createCompletionAssembler(requestOf(pair.kind, pair.request))
    expect(assembler.usage()).toBeNull()
    const completionSoFar = pair.chunks.map((chunk) => {
      assembler.add(chunk)
      return [assembler.usage()?.prompt_tokens, assembler.usage()?.completion_tokens]
    })
    // Roles, then choice 0, 1, 0, 1 (ends), 0 (ends), then vLLM's own total.
    expect(completionSoFar).toEqual([
      [12, 0],
      [12, 0],
      [12, 1],
      [12, 2],
      [12, 3],
      [12, 4],
      [12, 5],
      [12, 5],
    ])
    // A stream cut before its end: what it used is still known, the answer is not.
    const cut = createCompletionAssembler(requestOf(pair.kind, pair.request))
    for (const chunk of pair.chunks.slice(0, 5)) cut.add(chunk)
    expect(cut.usage()).toEqual({ prompt_tokens: 12, total_tokens: 15, completion_tokens: 3 })
    expect(cut.result()).toMatchObject({ type: 'malformed' })
  })

  it('can be asked for its result more than once, with the same answer', () => {
    const pair = vllmStreamPairs[0]
    if (!pair) throw new Error('no pair')
    const assembler = createCompletionAssembler(requestOf(pair.kind, pair.request))
    for (const chunk of pair.chunks) assembler.add(chunk)
    expect(assembler.result()).toEqual(assembler.result())
  })
})
