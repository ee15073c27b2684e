import { describe, expect, it } from 'vitest'
import {
  adminToken,
  decisionOf,
  model,
  type Stack,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { useSharedStack } from '../../support/use-scorer-stacks.ts'

// POST /admin/lookup takes the request an operator wonders about, as a client sends it
// (a chat body with its tools, a completions body) or as token ids, and answers the ids the
// scorer computed with each pod's matched blocks: the same ids the pod's /tokenize gives.

interface LookupAnswer {
  pool: string
  model: string
  tokenizer: { source: string; loaded: boolean; error: string | null }
  promptTokens: number
  estimated: boolean
  tokenIds: number[] | null
  blocks: number
  chosen: string | null
  pods: { pod: string; matchedBlocks: number; matchedTokens: number }[]
}

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather at a place, now.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'The city' } },
        required: ['city'],
      },
    },
  },
]
const chat = {
  model,
  messages: [
    { role: 'system', content: `You answer about the weather. ${words(1, 200)}` },
    { role: 'user', content: 'Is it raining in Lyon?' },
  ],
  tools,
  max_tokens: 2,
  ignore_eos: true,
}

async function lookup(stack: Stack, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${stack.scorer.url}/admin/lookup`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

async function tokenizeOnPod(stack: Stack, body: object): Promise<number[]> {
  const pod = stack.pods[0]
  if (!pod) throw new Error('no pod')
  const response = await fetch(`${pod.url}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { tokens: number[] }).tokens
}

describe('POST /admin/lookup', () => {
  const stack = useSharedStack({ pods: 2 })

  it('answers a chat body with tools: the ids the pod tokenizes, and the blocks each pod holds', async () => {
    const before = await lookup(stack, chat)
    expect(before.status).toBe(200)
    const answer = before.body as LookupAnswer
    expect(answer).toMatchObject({
      pool: 'default',
      model,
      tokenizer: { source: 'qwen3', loaded: true, error: null },
      estimated: false,
    })
    const { tokenIds } = answer
    expect(tokenIds).toEqual(
      await tokenizeOnPod(stack, { model, messages: chat.messages, tools: chat.tools }),
    )
    expect(answer.promptTokens).toBe(tokenIds?.length)
    expect(answer.blocks).toBe(Math.floor((tokenIds?.length ?? 0) / 16))
    expect(answer.pods.map((p) => p.matchedBlocks)).toEqual([0, 0])

    // Served once, the pod that ran it holds its blocks (from its KV events).
    const served = await send(stack, '/v1/chat/completions', chat)
    expect(served.status).toBe(200)
    const { pod } = decisionOf(served.headers)
    await until(async () => {
      const after = (await lookup(stack, chat)).body as LookupAnswer
      return (after.pods.find((p) => p.pod === pod)?.matchedBlocks ?? 0) >= answer.blocks
    })
    const after = (await lookup(stack, chat)).body as LookupAnswer
    expect(after.tokenIds).toEqual(tokenIds)
    expect(after.pods.find((p) => p.pod !== pod)?.matchedBlocks).toBe(0)
  })

  it('answers a completions prompt and token ids alike', async () => {
    const prompt = words(2, 120)
    const text = (await lookup(stack, { model, prompt })).body as LookupAnswer
    expect(text.tokenIds).toEqual(await tokenizeOnPod(stack, { model, prompt }))
    const ids = (await lookup(stack, { model, token_ids: text.tokenIds })).body as LookupAnswer
    expect(ids).toMatchObject({ tokenIds: text.tokenIds, blocks: text.blocks })
  })

  it.each([
    ['not JSON', '{"model":', null],
    ['an array', [], null],
    ['nothing to tokenize', { model }, 'messages'],
    ['messages that are not a list', { model, messages: 'hi' }, 'messages'],
    ['a message without its role', { model, messages: [{ content: 'hi' }] }, 'messages.0.role'],
    ['tools that are not a list', { ...chat, tools: 'get_weather' }, 'tools'],
    ['token ids that are not integers', { model, token_ids: ['a'] }, 'token_ids.0'],
    ['token ids and messages', { model, token_ids: [1], messages: chat.messages }, null],
    ['an unknown model', { model: 'nope', prompt: 'hi' }, 'model'],
  ])('refuses %s with an OpenAI-shaped 4xx', async (_what, body, param) => {
    const { status, body: answer } = await lookup(stack, body)
    expect(status).toBeGreaterThanOrEqual(400)
    expect(status).toBeLessThan(500)
    const { error } = answer as { error: { message: string; type: string; param: string | null } }
    expect(error.type).toBe('invalid_request_error')
    expect(error.message.length).toBeGreaterThan(0)
    if (param !== null) expect(error.param).toBe(param)
  })
})
