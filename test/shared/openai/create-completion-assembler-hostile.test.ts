import { describe, expect, it } from 'vitest'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { maxChoices } from '../../../shared/openai/can-assemble-from-stream.ts'
import { maxToolCalls } from '../../../shared/openai/chat-choice-builder.ts'
import { createCompletionAssembler } from '../../../shared/openai/create-completion-assembler.ts'
import { parseOpenAiRequest, type RequestKind } from '../../../shared/openai/openai-request.ts'

const bodies: Record<RequestKind, object> = {
  chat: { messages: [{ role: 'user', content: 'Hi' }] },
  completion: { prompt: 'Hi' },
}

function assemblerFor(kind: RequestKind = 'chat') {
  const parsed = parseOpenAiRequest(kind, bodies[kind])
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  return createCompletionAssembler(parsed.request)
}

const head = { id: 'chatcmpl-h', created: 1, model: 'm' }
const chunk = (...choices: unknown[]) => ({ ...head, choices })
const role = (index = 0) => ({ index, delta: { role: 'assistant', content: '' } })
const finish = (index = 0) => ({ index, delta: {}, finish_reason: 'stop' })

/** The malformed answer's message, or a failure naming what came instead. */
function problemOf(chunks: unknown[], kind: RequestKind = 'chat'): string {
  const assembler = assemblerFor(kind)
  for (const each of chunks) assembler.add(each)
  const answer = assembler.result()
  if (answer.type !== 'malformed') throw new Error(`not malformed: ${JSON.stringify(answer)}`)
  expect(KinfError.isInstance(answer.error)).toBe(true)
  expect(answer.error.status).toBe(502)
  return answer.error.message
}

describe('createCompletionAssembler on hostile input: a value, never a throw', () => {
  it.each([
    ['text', 'chunk 2: not a JSON object'],
    [null, 'chunk 2: not a JSON object'],
    [[1, 2], 'chunk 2: not a JSON object'],
    [{ ...head, choices: {} }, 'chunk 2: choices is not an array'],
    [chunk('x'), 'chunk 2: a choice is not an object'],
    [chunk({ index: -1, delta: {} }), 'index is not an integer from 0 to 127'],
    [chunk({ index: 0.5, delta: {} }), 'index is not an integer from 0 to 127'],
    [chunk({ index: '0', delta: {} }), 'index is not an integer from 0 to 127'],
    [chunk({ index: maxChoices, delta: {} }), 'index is not an integer from 0 to 127'],
    [chunk({ index: 0 }), 'choice 0: delta is not an object'],
    [chunk({ index: 0, delta: { content: 7 } }), 'choice 0: delta.content is not a string'],
    [chunk({ index: 0, delta: { reasoning: {} } }), 'delta.reasoning is not a string'],
    [chunk({ index: 0, delta: { tool_calls: {} } }), 'delta.tool_calls is not an array'],
    [chunk({ index: 0, delta: { tool_calls: [{ index: maxToolCalls }] } }), 'from 0 to 127'],
    [chunk({ index: 0, delta: { tool_calls: [{ index: 0, function: 'f' }] } }), 'not an object'],
    [chunk({ index: 0, delta: {}, logprobs: { content: 'x' } }), 'logprobs.content is not'],
    [chunk({ index: 0, delta: {}, finish_reason: 1 }), 'finish_reason is not a string'],
    [chunk({ index: 0, delta: {}, finish_reason: 'stop', stop_reason: {} }), 'stop_reason'],
    [chunk({ index: 0, delta: {}, token_ids: 5 }), 'token_ids is not an array'],
    [{ ...head, choices: [], usage: 'all' }, 'chunk 2: usage is not an object'],
  ])('refuses the malformed chunk %j', (bad, message) => {
    expect(problemOf([chunk(role()), bad])).toContain(message)
  })

  it.each([
    [[], 'ended before its first chunk'],
    [[{ choices: [], usage: { prompt_tokens: 1 } }], 'no chunk had a string id'],
    [[{ ...head, choices: [] }], 'it carried no choice'],
    [[chunk(role())], 'choice 0 did not finish'],
    [[chunk({ index: 0, delta: { content: 'a' }, finish_reason: 'stop' })], 'came without a role'],
    [[chunk(role(1)), chunk(finish(1))], 'choice 0 never came'],
    [
      [chunk(role()), { ...head, choices: [], usage: { prompt_tokens: -3 } }, chunk(finish())],
      'usage',
    ],
  ])('refuses a stream that is not a whole answer (%#)', (chunks, message) => {
    expect(problemOf(chunks)).toContain(message)
  })

  it('refuses tool calls with a gap, without an id or without a name', () => {
    const call = (delta: object) => chunk({ index: 0, delta: { tool_calls: [delta] } })
    const named = { type: 'function', function: { name: 'f' } }
    const stream = (...calls: object[]) => [chunk(role()), ...calls.map(call), chunk(finish())]
    expect(problemOf(stream({ index: 1, id: 'a', ...named }))).toContain('tool call 0 never came')
    expect(problemOf(stream({ index: 0, ...named }))).toContain('came without an id')
    expect(problemOf(stream({ index: 0, id: 'a', type: 'function' }))).toContain('function name')
  })

  it('refuses chunks of the other API: completions into chat, chat into completions', () => {
    const text = { index: 0, text: 'a', finish_reason: 'stop' }
    expect(problemOf([chunk(text)], 'chat')).toContain('delta is not an object')
    expect(problemOf([chunk(role())], 'completion')).toContain('text is missing')
  })

  it('ignores every chunk after the first bad one, and says so', () => {
    const assembler = assemblerFor()
    expect(assembler.add(chunk(role()))).toBe(true)
    expect(assembler.add(42)).toBe(false)
    expect(assembler.add(chunk(finish()))).toBe(false)
    const answer = assembler.result()
    expect(answer.type === 'malformed' && answer.error.message).toContain('chunk 2')
  })

  it("answers an error event with its status: vLLM's number, a Kinference code, else 502", () => {
    const status = (event: object) => {
      const assembler = assemblerFor()
      assembler.add(chunk(role()))
      expect(assembler.add(event)).toBe(false)
      expect(assembler.add(chunk(finish()))).toBe(false)
      const answer = assembler.result()
      if (answer.type !== 'upstream_error') throw new Error(JSON.stringify(answer))
      expect(answer.body).toBe(event)
      return answer.status
    }
    const error = (code: unknown) => ({ error: { message: 'm', type: 't', param: null, code } })
    expect(status(error(400))).toBe(400)
    expect(status(error('upstream_unavailable'))).toBe(503)
    expect(status(error('rate_limited'))).toBe(429)
    expect(status(error('model_not_found'))).toBe(502)
    expect(status(error(200))).toBe(502)
    expect(status({ object: 'error', message: 'm', type: 'BadRequestError', code: 400 })).toBe(400)
    expect(status({ error: 'the engine died' })).toBe(502)
  })

  it('takes 128 choices and 128 tool calls each, the caps, and keeps prototypes clean', () => {
    const assembler = assemblerFor()
    const calls = Array.from({ length: maxToolCalls }, (_, at) => ({
      index: at,
      id: `c${at}`,
      type: 'function',
      function: { name: 'f', arguments: '{}' },
    }))
    for (let index = 0; index < maxChoices; index++) {
      assembler.add(chunk(role(index), { index, delta: { tool_calls: calls } }, finish(index)))
    }
    assembler.add(JSON.parse('{"id":"x","__proto__":{"polluted":1},"choices":[]}'))
    const answer = assembler.result()
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    const choices = answer.body.choices as { message: { tool_calls: unknown[] } }[]
    expect(choices).toHaveLength(maxChoices)
    expect(choices.every((choice) => choice.message.tool_calls.length === maxToolCalls)).toBe(true)
    expect(({} as { polluted?: number }).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(answer.body)).toBe(Object.prototype)
  })

  it('is linear: 300,000 chunks, and one chunk whose lists hold 300,000 entries', () => {
    // Quadratic work or a spread into push() (a stack overflow) would fail this long before
    // the test's timeout; nothing here reads a clock.
    const count = 300_000
    const assembler = assemblerFor()
    assembler.add(chunk(role()))
    const piece = chunk({ index: 0, delta: { content: 'a' } })
    for (let i = 0; i < count; i++) assembler.add(piece)
    const long = Array.from({ length: count }, (_, i) => i)
    const token = { token: 'a', logprob: -1, bytes: [97], top_logprobs: [] }
    const logprobs = { content: Array.from({ length: count }, () => token) }
    assembler.add(chunk({ index: 0, delta: {}, logprobs, token_ids: long, finish_reason: 'stop' }))
    const answer = assembler.result()
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    const [only] = answer.body.choices as {
      message: { content: string }
      logprobs: { content: unknown[] }
      token_ids: number[]
    }[]
    expect(only?.message.content).toHaveLength(count)
    expect(only?.logprobs.content).toHaveLength(count)
    expect(only?.token_ids).toHaveLength(count)
  })

  it('takes usage-only chunks for their usage alone, the last one winning', () => {
    const assembler = assemblerFor('completion')
    const usage = (completion: number) => ({
      prompt_tokens: 2,
      total_tokens: 2 + completion,
      completion_tokens: completion,
    })
    assembler.add({ ...head, choices: [], usage: usage(1) })
    assembler.add({ ...head, choices: [{ index: 0, text: 'ab', finish_reason: 'length' }] })
    assembler.add({ ...head, choices: [], usage: usage(2) })
    const answer = assembler.result()
    if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
    expect(answer.usage).toEqual(usage(2))
    expect(answer.body.choices).toMatchObject([{ text: 'ab', finish_reason: 'length' }])
  })
})
