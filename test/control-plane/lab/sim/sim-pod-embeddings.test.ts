import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { model, text, usePods } from '../../../support/sim-pods.ts'

// A pod started with runner "pooling" serves /v1/embeddings as vLLM's pooling runner does
// (docs/vllm-wire.md, "Embeddings (the pooling runner)"), and the completions routes are
// missing there, as /v1/embeddings is on a generate pod.

const { pod } = usePods(afterEach)
const pooling = () => pod({ runner: 'pooling', embeddingSize: 64 })
const client = (target: SimPod) => new OpenAI({ baseURL: `${target.url}/v1`, apiKey: 'unused' })
const tokenizer = loadSimModelAssets('qwen3').tokenizer
const countOf = (input: string) => tokenizer.encode(input, { addSpecialTokens: true }).length

async function post(target: SimPod, path: string, body: object) {
  const response = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

function norm(vector: readonly number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0))
}

function metric(body: string, name: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
  return Number(line?.split(' ').at(-1))
}

describe('a pooling pod serving /v1/embeddings', () => {
  it('answers the openai client with one unit vector per input and the prompt tokens as usage', async () => {
    const target = await pooling()
    const inputs = ['The quick brown fox.', text(1, 40)]
    const answer = await client(target).embeddings.create({
      model,
      input: inputs,
      encoding_format: 'float',
    })
    expect(answer.object).toBe('list')
    expect(answer.model).toBe(model)
    // vLLM's answer carries an id, which the client's type leaves out.
    expect((answer as unknown as { id: string }).id).toMatch(/^embd-/)
    expect(answer.data.map((d) => [d.index, d.object, d.embedding.length])).toEqual([
      [0, 'embedding', 64],
      [1, 'embedding', 64],
    ])
    for (const item of answer.data) expect(norm(item.embedding)).toBeCloseTo(1, 5)
    expect(answer.data[0]?.embedding).not.toEqual(answer.data[1]?.embedding)
    const tokens = countOf(inputs[0] as string) + countOf(inputs[1] as string)
    expect(answer.usage).toEqual({
      prompt_tokens: tokens,
      total_tokens: tokens,
      completion_tokens: 0,
      prompt_tokens_details: null,
    })
  })

  it('encodes base64 as the float32 little-endian bytes of the same vector', async () => {
    const target = await pooling()
    const input = 'Embeddings travel as base64 too.'
    const floats = await client(target).embeddings.create({
      model,
      input,
      encoding_format: 'float',
    })
    const raw = await post(target, '/v1/embeddings', { model, input, encoding_format: 'base64' })
    expect(raw.status).toBe(200)
    const encoded = (raw.body.data as { embedding: unknown }[])[0]?.embedding
    expect(typeof encoded).toBe('string')
    const bytes = Buffer.from(encoded as string, 'base64')
    expect(bytes.length).toBe(64 * 4)
    const decoded = Array.from({ length: 64 }, (_, i) => bytes.readFloatLE(i * 4))
    expect(decoded).toEqual(floats.data[0]?.embedding)
    // The client asks for base64 when told nothing and decodes it to the same floats.
    const asDefault = await client(target).embeddings.create({ model, input })
    expect(asDefault.data[0]?.embedding).toEqual(floats.data[0]?.embedding)
  })

  it('gives the same input the same vector on every pod, whatever its seed', async () => {
    const [a, b] = [
      await pod({ runner: 'pooling', seed: 1 }),
      await pod({ runner: 'pooling', seed: 2 }),
    ]
    const ask = async (target: SimPod, input: string | number[]) =>
      (await client(target).embeddings.create({ model, input, encoding_format: 'float' })).data[0]
        ?.embedding ?? []
    const first = await ask(a, 'same words, same vector')
    expect(first).toHaveLength(1024)
    expect(await ask(b, 'same words, same vector')).toEqual(first)
    // Token ids are the same input as the text they encode.
    expect(await ask(b, tokenizer.encode('same words, same vector'))).toEqual(first)
    expect(await ask(b, 'other words, other vector')).not.toEqual(first)
  })

  it('runs each input through the engine as a prefill, counted on /metrics, with no KV events', async () => {
    const target = await pooling()
    const inputs = [text(2, 300), text(3, 300), text(4, 300)]
    await client(target).embeddings.create({ model, input: inputs })
    const tokens = inputs.reduce((sum, input) => sum + countOf(input), 0)
    const metrics = await (await fetch(`${target.url}/metrics`)).text()
    expect(metric(metrics, 'vllm:prompt_tokens_total')).toBe(tokens)
    expect(metric(metrics, 'vllm:generation_tokens_total')).toBe(0)
    expect(metrics).toMatch(/vllm:request_success_total\{[^}]*finished_reason="stop"[^}]*\} 3/)
    expect(metric(metrics, 'vllm:prefix_cache_queries_total')).toBe(0)
    expect(target.runtime().engine.stats.steps).toBeGreaterThan(0)
    expect(target.runtime().publisher.seq).toBe(0n)
  })

  it('truncates to truncate_prompt_tokens, keeping the last tokens', async () => {
    const target = await pooling()
    const input = text(5, 50)
    const ids = tokenizer.encode(input, { addSpecialTokens: true })
    const whole = await post(target, '/v1/embeddings', { model, input, truncate_prompt_tokens: 8 })
    const tail = await post(target, '/v1/embeddings', { model, input: ids.slice(-8) })
    expect(whole.status).toBe(200)
    expect((whole.body.usage as { prompt_tokens: number }).prompt_tokens).toBe(8)
    expect(whole.body.data).toEqual(tail.body.data)
  })

  it('embeds messages through the chat template, without the generation prompt by default', async () => {
    const target = await pooling()
    const messages = [{ role: 'user', content: 'Embed this conversation.' }]
    const tokenized = async (addGenerationPrompt: boolean) =>
      (
        await post(target, '/tokenize', {
          model,
          messages,
          add_generation_prompt: addGenerationPrompt,
        })
      ).body.count
    const usageOf = async (body: object) =>
      (
        (await post(target, '/v1/embeddings', { model, messages, ...body })).body.usage as {
          prompt_tokens: number
        }
      ).prompt_tokens
    expect(await tokenized(true)).toBeGreaterThan((await tokenized(false)) as number)
    expect(await usageOf({})).toBe(await tokenized(false))
    expect(await usageOf({ add_generation_prompt: true })).toBe(await tokenized(true))
  })
})

describe('a pooling pod refusing an embeddings request', () => {
  it('refuses dimensions: the simulated model is not matryoshka', async () => {
    const target = await pooling()
    const error = await client(target)
      .embeddings.create({ model, input: 'hello', dimensions: 32 })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
      message: `Model "${model}" does not support matryoshka representation, changing output dimensions will lead to poor results.`,
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
  })

  it('answers bad input in vLLM’s shapes', async () => {
    const target = await pooling()
    const error = async (body: object) => {
      const answer = await post(target, '/v1/embeddings', { model, ...body })
      return { status: answer.status, error: answer.body.error as Record<string, unknown> }
    }
    const missing = await error({})
    expect(missing.status).toBe(400)
    expect(missing.error.type).toBe('Bad Request')
    expect(missing.error.message).toContain(
      "'loc': ('body', 'EmbeddingCompletionRequest', 'input')",
    )
    const wrongType = await error({ input: 42 })
    expect([wrongType.status, wrongType.error.type]).toEqual([400, 'Bad Request'])
    const outside = await error({ input: [1, 10_000_000] })
    expect([outside.status, outside.error.message, outside.error.param]).toEqual([
      400,
      'Token id 10000000 is out of vocabulary',
      'input',
    ])
    const tooLong = await error({ input: Array.from({ length: 40_000 }, () => 100) })
    expect(tooLong.status).toBe(400)
    expect(tooLong.error.message).toContain("This model's maximum context length is")
    const truncation = await error({ input: 'hi', truncate_prompt_tokens: 10_000_000 })
    expect([truncation.status, truncation.error.param]).toEqual([400, 'truncate_prompt_tokens'])
    const otherModel = await error({ model: 'nope', input: 'hi' })
    expect([otherModel.status, otherModel.error.type]).toEqual([404, 'NotFoundError'])
  })
})

describe('the runner decides the routes', () => {
  it('answers 404 for the completions routes on a pooling pod, as an unregistered route', async () => {
    const target = await pooling()
    const messages = [{ role: 'user', content: 'hi' }]
    expect(await post(target, '/v1/chat/completions', { model, messages })).toEqual({
      status: 404,
      body: { detail: 'Not Found' },
    })
    expect(await post(target, '/v1/completions', { model, prompt: 'hi' })).toEqual({
      status: 404,
      body: { detail: 'Not Found' },
    })
  })

  it('answers 404 for /v1/embeddings on a generate pod, which still generates', async () => {
    const target = await pod()
    expect(await post(target, '/v1/embeddings', { model, input: 'hi' })).toEqual({
      status: 404,
      body: { detail: 'Not Found' },
    })
    const chat = await post(target, '/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    })
    expect(chat.status).toBe(200)
  })
})
