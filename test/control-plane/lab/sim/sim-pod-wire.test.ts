import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { Subscriber } from 'zeromq'
import { decodeEventBatch } from '../../../../control-plane/kv-events/decode-event-batch.ts'
import type { BlockStored } from '../../../../control-plane/kv-events/kv-cache-event.ts'
import { requestReplay } from '../../../../control-plane/kv-events/request-replay.ts'
import type { SimPod } from '../../../../control-plane/lab/sim/sim-pod.ts'
import { parsePrometheusText } from '../../../../control-plane/metrics/parse-prometheus-text.ts'
import { chat, model, text, until, usePods } from '../../../support/sim-pods.ts'

const { pod, cleanups } = usePods(afterEach)

/** Raw frames from the pod's PUB socket, with a reset as the slow-joiner probe. */
async function rawFrames(target: SimPod) {
  const frames: Buffer[][] = []
  const sub = new Subscriber({ linger: 0 })
  sub.connect(target.kvEventsEndpoint)
  sub.subscribe(target.topic)
  cleanups.push(async () => sub.close())
  void (async () => {
    for await (const message of sub) frames.push(message as Buffer[])
  })().catch(() => {})
  // Each probe is awaited, so no reset is still in flight once the first one arrived.
  for (let probe = 0; frames.length === 0 && probe < 500; probe++) {
    await fetch(`${target.url}/reset_prefix_cache`, { method: 'POST' })
    await until(() => frames.length > 0, 20).catch(() => {})
  }
  await new Promise((resolve) => setTimeout(resolve, 50))
  frames.length = 0
  return frames
}

async function tokenize(target: SimPod, body: object): Promise<number[]> {
  const response = await fetch(`${target.url}/tokenize`, {
    method: 'POST',
    body: JSON.stringify(body),
  })
  return ((await response.json()) as { tokens: number[] }).tokens
}

describe('a simulated pod on the wire', () => {
  it.each(['map', 'array'] as const)(
    'publishes vLLM KV-event batches (%s encoding) whose blocks are the prompt’s tokens',
    async (eventEncoding) => {
      const target = await pod({ eventEncoding })
      const frames = await rawFrames(target)
      const messages = [{ role: 'user', content: text(7, 60) }]
      const answer = await chat(target, { messages, max_tokens: 2, ignore_eos: true })
      expect(answer.status).toBe(200)
      const promptIds = await tokenize(target, { messages })
      const isStored = (message: Buffer[]) =>
        decodeEventBatch(new Uint8Array(message[2] as Buffer)).events.some(
          (e) => e.type === 'BlockStored',
        )
      await until(() => frames.some(isStored))
      const [topic, seq, payload] = frames.find(isStored) as Buffer[]
      expect(topic?.toString()).toBe(`kv@test-pod@${model}`)
      expect(seq).toHaveLength(8)
      // Outer batch: [ts(float64), events, dp_rank]; events are maps or positional arrays.
      expect(payload?.[0]).toBe(0x93)
      expect(payload?.[1]).toBe(0xcb)
      const batch = decodeEventBatch(new Uint8Array(payload as Buffer))
      const stored = batch.events.find((e): e is BlockStored => e.type === 'BlockStored')
      expect(stored?.medium).toBe('GPU')
      expect(stored?.blockSize).toBe(16)
      expect(stored?.parentBlockHash).toBe(null)
      const full = Math.floor(promptIds.length / 16) * 16
      expect(stored?.tokenIds).toEqual(promptIds.slice(0, full))
      expect(stored?.blockHashes).toHaveLength(full / 16)
      const firstEventByte = payload?.[11]
      if (eventEncoding === 'map') expect((firstEventByte ?? 0) & 0xf0).toBe(0x80)
      else expect((firstEventByte ?? 0) & 0xf0).toBe(0x90)
    },
  )

  it('answers replay requests with the buffered batches, then the end marker', async () => {
    const target = await pod()
    for (const seed of [1, 2, 3])
      await chat(target, { messages: [{ role: 'user', content: text(seed, 40) }], max_tokens: 1 })
    const replayed = await requestReplay({ endpoint: target.replayEndpoint, startSeq: 0n })
    expect(replayed.map((r) => r.seq)).toEqual(replayed.map((_, i) => BigInt(i)))
    expect(replayed.length).toBeGreaterThanOrEqual(3)
    const tail = await requestReplay({ endpoint: target.replayEndpoint, startSeq: 1n })
    expect(tail).toEqual(replayed.slice(1))
  })

  it('streams a chat completion to the official openai client, usage and cached tokens included', async () => {
    const target = await pod()
    const client = new OpenAI({ baseURL: `${target.url}/v1`, apiKey: 'unused' })
    const messages = [
      { role: 'system' as const, content: text(3, 200) },
      { role: 'user' as const, content: 'Say something.' },
    ]
    await client.chat.completions.create({ model, messages, max_tokens: 3 })
    const stream = await client.chat.completions.create({
      model,
      messages,
      max_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
      // vLLM extension, passed through as an unknown field by the client.
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming)
    let content = ''
    let finish: string | null = null
    let usage: OpenAI.CompletionUsage | undefined
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
      usage = chunk.usage ?? usage
    }
    expect(finish).toBe('length')
    expect(usage?.completion_tokens).toBe(12)
    expect(usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(500)
    expect(await tokenize(target, { prompt: content })).toHaveLength(12)
  })

  it('stops by itself with finish_reason stop when ignore_eos is not set', async () => {
    const target = await pod()
    const answer = await chat(target, {
      messages: [{ role: 'user', content: 'Tell me.' }],
      max_tokens: 5000,
      seed: 3,
    })
    expect(answer.body.choices[0]?.finish_reason).toBe('stop')
    const { completion_tokens: tokens } = answer.body.usage
    expect(tokens).toBeLessThan(5000)
    // The stop token counts as generated but is not part of the text.
    const content = answer.body.choices[0]?.message.content ?? ''
    expect(await tokenize(target, { prompt: content })).toHaveLength(tokens - 1)
    const capped = await chat(target, {
      messages: [{ role: 'user', content: 'Tell me.' }],
      max_tokens: 3,
      min_tokens: 3,
    })
    expect(capped.body.choices[0]?.finish_reason).toBe('length')
  })

  it('serves completions, models and tokenize like vLLM', async () => {
    const target = await pod()
    const client = new OpenAI({ baseURL: `${target.url}/v1`, apiKey: 'unused' })
    const models = await client.models.list()
    expect(models.data.map((m) => m.id)).toEqual([model])
    const completion = await client.completions.create({
      model,
      prompt: 'Hello world',
      max_tokens: 5,
      ignore_eos: true,
    } as never)
    expect(completion.usage?.prompt_tokens).toBe(2)
    expect(completion.usage?.completion_tokens).toBe(5)
    expect(await tokenize(target, { prompt: 'Hello world' })).toEqual([9707, 1879])
    const fromIds = await client.completions.create({
      model,
      prompt: [9707, 1879],
      max_tokens: 1,
    } as never)
    expect(fromIds.usage?.prompt_tokens).toBe(2)
  })

  it('exposes vLLM V1 metric names and labels on /metrics', async () => {
    const target = await pod()
    await chat(target, { messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 })
    const { samples, errors } = parsePrometheusText(
      await (await fetch(`${target.url}/metrics`)).text(),
    )
    expect(errors).toEqual([])
    const names = new Set(samples.map((s) => s.name))
    for (const name of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:prefix_cache_queries_total',
      'vllm:prefix_cache_hits_total',
      'vllm:num_preemptions_total',
      'vllm:time_to_first_token_seconds_bucket',
      'vllm:inter_token_latency_seconds_count',
      'vllm:e2e_request_latency_seconds_sum',
      'vllm:cache_config_info',
    ]) {
      expect(names, name).toContain(name)
    }
    const config = samples.find((s) => s.name === 'vllm:cache_config_info')
    expect(config?.labels.block_size).toBe('16')
    expect(config?.labels.num_gpu_blocks).toBe('5888')
    const ttftCount = samples.find((s) => s.name === 'vllm:time_to_first_token_seconds_count')
    expect(ttftCount?.labels).toEqual({ engine: '0', model_name: model })
    expect(ttftCount?.value).toBe(1)
  })
})

describe('a simulated pod given bad input', () => {
  it('answers with vLLM’s 400s and keeps serving', async () => {
    const target = await pod()
    const post = async (path: string, body: string) => {
      const response = await fetch(`${target.url}${path}`, { method: 'POST', body })
      return {
        status: response.status,
        body: (await response.json()) as {
          error?: { message: string; type: string; code: number }
        },
      }
    }
    const user = [{ role: 'user', content: 'hello' }]
    const cases: [string, string, number, RegExp][] = [
      ['/v1/chat/completions', '{"messages": [', 400, /JSON decode error/],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: user, max_tokens: 40_000 }),
        400,
        /maximum context length is 32768 tokens.*you requested 40000 output tokens/,
      ],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: [{ role: 'user', content: 'word '.repeat(40_000) }] }),
        400,
        /your request has \d+ input tokens/,
      ],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: user, max_tokens: -5 }),
        400,
        /max_tokens must be at least 1, got -5/,
      ],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: user, temperature: -1 }),
        400,
        /temperature must be non-negative/,
      ],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: user, top_p: 7 }),
        400,
        /top_p must be in \(0, 1\]/,
      ],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: user, stream_options: { include_usage: true } }),
        400,
        /only be defined when `stream=True`/,
      ],
      ['/v1/chat/completions', JSON.stringify({ model, messages: [] }), 400, /messages/],
      [
        '/v1/chat/completions',
        JSON.stringify({ model: 'gpt-4', messages: user }),
        404,
        /The model `gpt-4` does not exist/,
      ],
      [
        '/v1/chat/completions',
        JSON.stringify({ model, messages: [{ role: 'user', content: 42 }] }),
        400,
        /content/,
      ],
      [
        '/v1/completions',
        JSON.stringify({ model, prompt: [1, 999_999_999] }),
        400,
        /out of vocabulary/,
      ],
      ['/v1/completions', JSON.stringify({ model, prompt: '' }), 400, /cannot be empty/],
      ['/tokenize', JSON.stringify({}), 400, /prompt or messages/],
    ]
    for (const [path, body, status, message] of cases) {
      const answer = await post(path, body)
      expect(answer.status, body.slice(0, 60)).toBe(status)
      expect(answer.body.error?.message, body.slice(0, 60)).toMatch(message)
      expect(answer.body.error?.code).toBe(status)
    }
    // Unknown fields are ignored, as vLLM ignores them.
    const unknown = await post(
      '/v1/chat/completions',
      JSON.stringify({ model, messages: user, max_tokens: 2, frobnicate: true }),
    )
    expect(unknown.status).toBe(200)
    expect((await fetch(`${target.url}/v1/nothing`)).status).toBe(404)
    expect((await fetch(`${target.url}/v1/chat/completions`)).status).toBe(405)
    expect((await fetch(`${target.url}/health`)).status).toBe(200)
  })
})
