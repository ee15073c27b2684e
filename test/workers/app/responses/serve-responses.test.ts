import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { client, start } from '../../../support/embedded-stack.ts'
import { decisionOf } from '../../../support/scorer-stack.ts'

// The Responses API through the edge that `npm start` runs, with the official client: the
// request goes through the chat pipeline (the scorer picks a simulated pod), and a
// conversation continued by previous_response_id returns to the pod holding its prefix.

const model = 'qwen3.8-27b-fp8'
const words = (seed: number, count: number) =>
  Array.from({ length: count }, (_, i) => `r${seed}w${i}`).join(' ')

describe('POST /v1/responses with the openai client', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start()
  })
  afterAll(() => stack.close())

  it('answers a response, then continues it with previous_response_id on the pod that holds its prefix', async () => {
    const openai = client(stack)
    const first = await openai.responses
      .create({
        model,
        instructions: 'Answer briefly.',
        input: `Remember these words: ${words(1, 400)}`,
        max_output_tokens: 8,
      })
      .withResponse()
    expect(first.data.id).toMatch(/^resp_/)
    expect(first.data.object).toBe('response')
    expect(first.data.output_text.length).toBeGreaterThan(0)
    expect(first.data.usage?.input_tokens).toBeGreaterThan(400)
    expect(first.data.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(0)
    const pod = decisionOf(first.response.headers).pod
    expect(pod).toMatch(/^sim-27b-\d/)

    // The pod's KV events reach the index shortly after the first answer.
    let second: { data: OpenAI.Responses.Response; response: Response }
    for (let attempt = 0; ; attempt++) {
      second = await openai.responses
        .create({
          model,
          // Instructions do not carry over (as OpenAI's): the same ones keep the prefix.
          instructions: 'Answer briefly.',
          previous_response_id: first.data.id,
          input: 'And now?',
          max_output_tokens: 8,
        })
        .withResponse()
      if (Number(decisionOf(second.response.headers).matched_tokens) > 0 || attempt > 20) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // The whole first turn, its answer included, is in the second prompt.
    expect(second.data.usage?.input_tokens).toBeGreaterThan(
      (first.data.usage?.input_tokens ?? 0) + (first.data.usage?.output_tokens ?? 0) - 20,
    )
    expect(second.data.previous_response_id).toBe(first.data.id)
    const decision = decisionOf(second.response.headers)
    expect(decision.pod).toBe(pod)
    expect(Number(decision.matched_tokens)).toBeGreaterThan(300)
  })

  it('streams the Responses API events the client’s stream helper assembles', async () => {
    const openai = client(stack)
    const stream = await openai.responses.create({
      model,
      input: 'Stream a few words.',
      max_output_tokens: 6,
      stream: true,
    })
    const types: string[] = []
    let text = ''
    let completed: OpenAI.Responses.Response | null = null
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === 'response.output_text.delta') text += event.delta
      if (event.type === 'response.completed') completed = event.response
    }
    expect(types[0]).toBe('response.created')
    expect(types).toContain('response.output_item.added')
    expect(types).toContain('response.output_text.delta')
    expect(types.at(-1)).toBe('response.completed')
    expect(
      completed?.output_text ??
        (completed?.output[0] as { content: { text: string }[] })?.content[0]?.text,
    ).toBe(text)
    expect(completed?.usage?.output_tokens).toBe(6)

    const helper = openai.responses.stream({
      model,
      input: 'Again, streamed.',
      max_output_tokens: 4,
    })
    const final = await helper.finalResponse()
    // Cut at max_output_tokens, as OpenAI reports it.
    expect(final.status).toBe('incomplete')
    expect(final.incomplete_details?.reason).toBe('max_output_tokens')
    expect(final.output_text.length).toBeGreaterThan(0)

    // A streamed response is stored too: it can be continued.
    const next = await openai.responses.create({
      model,
      previous_response_id: final.id,
      input: 'Continue.',
      max_output_tokens: 4,
    })
    expect(next.previous_response_id).toBe(final.id)
    expect(next.usage?.input_tokens).toBeGreaterThan(final.usage?.input_tokens ?? 0)
  })

  it('counts a response once at the edge, though it is served through the chat route', async () => {
    const total = async () => {
      const text = await (await fetch(`${stack.edge.metricsUrl}/metrics`)).text()
      return text
        .split('\n')
        .filter((line) => line.startsWith('kinference_edge_requests_total{'))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
    }
    const before = await total()
    await client(stack).responses.create({ model, input: 'Count me once.', max_output_tokens: 2 })
    expect(await total()).toBe(before + 1)
  })

  it('refuses what it cannot serve with OpenAI’s errors', async () => {
    const openai = client(stack)
    const unknown = await openai.responses
      .create({ model, previous_response_id: 'resp_nothing', input: 'hi' })
      .catch((error: unknown) => error)
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe(
      'previous_response_not_found',
    )
    const builtin = await openai.responses
      .create({ model, input: 'search', tools: [{ type: 'web_search' }] } as never)
      .catch((error: unknown) => error)
    expect(builtin).toBeInstanceOf(OpenAI.BadRequestError)
    const anonymous = await client(stack, 'sk-not-a-key')
      .responses.create({ model, input: 'hi' })
      .catch((error: unknown) => error)
    expect(anonymous).toBeInstanceOf(OpenAI.AuthenticationError)
  })
})
