import fc from 'fast-check'
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream'
import { describe, expect, it } from 'vitest'
import { createCompletionAssembler } from '../../../shared/openai/create-completion-assembler.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { vllmStreamPairs } from '../../support/vllm-stream-pairs.ts'

/**
 * The official openai client's own accumulator (ChatCompletionStream, whose
 * finalChatCompletion() is what its users read) as the reference: the same chunks through
 * both give the same content, tool calls, logprobs, finish reasons and usage.
 */
async function openAiFinal(chunks: readonly object[]) {
  const lines = chunks.map((chunk) => `${JSON.stringify(chunk)}\n`).join('')
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines))
      controller.close()
    },
  })
  return ChatCompletionStream.fromReadableStream(body).finalChatCompletion()
}

function ours(chunks: readonly object[]) {
  const parsed = parseOpenAiRequest('chat', { messages: [{ role: 'user', content: 'Hi' }] })
  if ('issues' in parsed) throw new Error(parsed.issues.message)
  const assembler = createCompletionAssembler(parsed.request)
  for (const chunk of chunks) assembler.add(chunk)
  const answer = assembler.result()
  if (answer.type !== 'completion') throw new Error(JSON.stringify(answer))
  return answer.body
}

interface ComparableChoice {
  message: { role?: unknown; content?: unknown; tool_calls?: unknown }
  logprobs?: { content?: unknown } | null
  finish_reason?: unknown
  stop_reason?: unknown
}

/**
 * What both accumulators promise. The openai client cannot tell content "" from none
 * (it appends only non-empty pieces), so both sides read "" as null here.
 */
function comparable(body: { choices: readonly unknown[]; usage?: unknown }) {
  return {
    usage: body.usage,
    choices: (body.choices as ComparableChoice[]).map((choice) => ({
      role: choice.message.role,
      content: choice.message.content || null,
      toolCalls: choice.message.tool_calls ?? [],
      logprobs: choice.logprobs?.content ?? null,
      finish: choice.finish_reason,
      stop: choice.stop_reason,
    })),
  }
}

async function expectSameAsOpenAi(chunks: readonly object[]) {
  const theirs = await openAiFinal(chunks)
  const mine = ours(chunks)
  expect(comparable(mine as never)).toEqual(comparable(theirs as never))
}

const head = { id: 'chatcmpl-p', object: 'chat.completion.chunk', created: 3, model: 'm' }
const piece = fc.string({ unit: 'grapheme', maxLength: 5 })
const generatedChoice = fc.record({
  content: fc.array(piece, { maxLength: 5 }),
  toolCalls: fc.array(
    fc.record({
      name: fc.stringMatching(/^[a-z_]{1,8}$/),
      args: fc.array(piece, { maxLength: 4 }),
    }),
    { maxLength: 3 },
  ),
  logprobs: fc.boolean(),
  finish: fc.constantFrom('stop', 'length', 'tool_calls'),
  stop: fc.option(fc.oneof(fc.string({ maxLength: 3 }), fc.nat(200_000)), { nil: null }),
})
type GeneratedChoice = typeof generatedChoice extends fc.Arbitrary<infer T> ? T : never

/** One choice's events in vLLM's order: role, content, each tool call (start, then arguments), finish. */
function choiceEvents(index: number, choice: GeneratedChoice): object[] {
  const token = (text: string) => ({ token: text, logprob: -0.5, bytes: [], top_logprobs: [] })
  const events: object[] = [{ index, delta: { role: 'assistant', content: '' }, logprobs: null }]
  for (const text of choice.content) {
    const logprobs = choice.logprobs ? { content: [token(text)] } : null
    events.push({ index, delta: { content: text }, logprobs, finish_reason: null })
  }
  choice.toolCalls.forEach((call, at) => {
    const start = { index: at, id: `call-${index}-${at}`, type: 'function' }
    events.push({ index, delta: { tool_calls: [{ ...start, function: { name: call.name } }] } })
    for (const args of call.args) {
      events.push({ index, delta: { tool_calls: [{ index: at, function: { arguments: args } }] } })
    }
  })
  events.push({ index, delta: {}, finish_reason: choice.finish, stop_reason: choice.stop })
  return events
}

/** Interleaves the choices' events as n > 1 streams do, each choice's own order kept. */
function streamOf(choices: GeneratedChoice[], seed: number): object[] {
  const random = createSeededRandom(seed)
  const queues = choices.map((choice, index) => choiceEvents(index, choice))
  const chunks: object[] = []
  let completion = 0
  for (let left = queues.flat().length; left > 0; left--) {
    const open = queues.filter((queue) => queue.length > 0)
    const event = open[Math.floor(random() * open.length)]?.shift()
    completion++
    const usage = { prompt_tokens: 7, total_tokens: 7 + completion, completion_tokens: completion }
    chunks.push({ ...head, choices: [event], usage })
  }
  const usage = { prompt_tokens: 7, total_tokens: 7 + completion, completion_tokens: completion }
  chunks.push({
    ...head,
    choices: [],
    usage: { ...usage, prompt_tokens_details: { cached_tokens: 4 } },
  })
  return chunks
}

describe('createCompletionAssembler against the openai client’s ChatCompletionStream', () => {
  for (const pair of vllmStreamPairs.filter((p) => p.kind === 'chat' && p.full.status === 200)) {
    it(`agrees on the recorded vLLM stream: ${pair.name}`, async () => {
      await expectSameAsOpenAi(pair.chunks)
    })
  }

  it('agrees on generated streams: n up to 3 interleaved, tool calls in pieces, logprobs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(generatedChoice, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        async (choices, seed) => {
          await expectSameAsOpenAi(streamOf(choices, seed))
        },
      ),
      { numRuns: 200, seed: 22 },
    )
  })
})
