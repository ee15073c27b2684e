import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { builtinTokenizers } from '../../../../shared/crd/builtin-tokenizers.ts'
import type { KinferenceResource } from '../../../../shared/crd/resource.ts'
import { adminLookup, askChat, podTokenIds } from '../../../support/embedded-chat.ts'
import { start } from '../../../support/embedded-stack.ts'

// Issue 23's end-to-end check, one family at a time: the pool's pods serve the family's
// tokenizer (loaded by the simulator's own path), the scorer renders and tokenizes with the
// router's, and the edge sends a chat with tools, then its multi-turn follow-up. The
// follow-up must go to the pod that holds the first request's blocks, and the cached tokens
// that pod reports must be the ones the scorer predicted. Nothing here tells the two sides
// the ids: they agree or the prediction misses.

const model = 'qwen3.8-27b-fp8'

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather in a city, with temperatures in °C and wind in km/h.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name, e.g. Zürich' },
          days: { type: 'integer', minimum: 1, maximum: 7 },
        },
        required: ['city'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search_orders',
      description: 'Looks up a customer’s orders by status.',
      parameters: {
        type: 'object',
        properties: { status: { type: 'string', enum: ['open', 'shipped', 'returned'] } },
      },
    },
  },
]

const system = [
  'You are the travel desk assistant of a logistics company.',
  ...Array.from(
    { length: 24 },
    (_, i) =>
      `Rule ${i + 1}: answer briefly, cite the tool you used, and never invent an order number; item ${i * 7} of the handbook applies.`,
  ),
].join('\n')

/** Families whose templates render an assistant's tool calls and the tool's answer. */
const rendersToolTurns = new Set(['qwen3', 'llama3.1', 'gpt-oss'])

function firstTurn(): unknown[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: 'What is the weather in Lyon this week?' },
  ]
}

function followUp(family: string, answer: string): unknown[] {
  if (!rendersToolTurns.has(family)) {
    return [
      ...firstTurn(),
      { role: 'assistant', content: answer },
      { role: 'user', content: 'And in Geneva?' },
    ]
  }
  return [
    ...firstTurn(),
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city": "Lyon", "days": 7}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"high": 21, "low": 12, "wind": 9}' },
    { role: 'user', content: 'And in Geneva?' },
  ]
}

const ask = (stack: EmbeddedStack, messages: unknown[]) =>
  askChat(stack, { model, messages, tools, max_tokens: 8, ignore_eos: true })

/** Every pool serving the demo's big model gets the family's tokenizer, pods included. */
const servingFamily = (family: string) => (resource: KinferenceResource) => {
  if (resource.kind !== 'InferencePool') return
  for (const served of resource.spec.models) if (served.name === model) served.tokenizer = family
}

describe.each(builtinTokenizers)(
  'the %s family end to end (edge, scorer, simulated pods)',
  (family) => {
    let stack: EmbeddedStack
    beforeAll(async () => {
      stack = await start({ patch: servingFamily(family) })
    }, 120_000)
    afterAll(() => stack?.close())

    it('routes a chat with tools and its follow-up to the pod holding their prefix, predicting the cached tokens the pod reports', async () => {
      const first = await ask(stack, firstTurn())
      expect(first.pod).toMatch(/^sim-27b-/)
      expect(first.promptTokens).toBeGreaterThan(500)

      const second = { model, messages: followUp(family, first.content), tools }
      const scorer = await adminLookup(stack, second)
      expect(scorer.tokenizer.loaded).toBe(true)
      expect(scorer.tokenIds).toEqual(await podTokenIds(stack, first.pod, second))
      // The first request's blocks reach the index over the pod's KV events.
      for (let i = 0; i < 100; i++) {
        const held = await adminLookup(stack, second)
        if ((held.pods.find((p) => p.pod === first.pod)?.matchedBlocks ?? 0) > 0) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }

      const answered = await ask(stack, second.messages)
      expect(answered.pod).toBe(first.pod)
      expect(answered.promptTokens).toBe(scorer.tokenIds?.length)
      // The system prompt and the tools alone fill many blocks.
      expect(answered.matchedTokens).toBeGreaterThan(400)
      expect(answered.cachedTokens).toBe(answered.matchedTokens)
    }, 60_000)
  },
)
