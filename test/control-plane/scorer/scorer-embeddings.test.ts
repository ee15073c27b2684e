import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'
import { describe, expect, it } from 'vitest'
import {
  startScorerOver,
  startSimulatedPools,
} from '../../../control-plane/lab/embedded/start-simulated-pools.ts'
import { startSimFleet } from '../../../control-plane/lab/sim/sim-fleet.ts'
import { loadSimModelAssets } from '../../../control-plane/lab/sim/sim-model-assets.ts'
import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { l40s27bFp8 } from '../../../shared/gpu/gpu-profile.ts'
import type { LogFields } from '../../../shared/logging/log.ts'
import {
  embeddingInputs,
  estimateEmbeddingTokens,
  OpenAiEmbeddingRequest,
} from '../../../shared/openai/openai-embedding-request.ts'
import { joinDecisions } from '../../../shared/state/decision-entry.ts'
import {
  decisionOf,
  model,
  poolSpec,
  type Stack,
  secret,
  send,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

// POST /v1/embeddings through the scorer, signed as the edge signs chat: a pool whose model
// has task Embed runs its simulated pods on vLLM's pooling runner; the scorer counts the
// inputs with the pool's tokenizer, routes on load alone and passes the pod's answer on.

const stacks = useScorerStacks()
const embedModel = 'qwen3-embedding-sim'
const tokenizer = loadSimModelAssets('qwen3').tokenizer
const countOf = (texts: string[]) =>
  texts.reduce((sum, text) => sum + tokenizer.encode(text, { addSpecialTokens: true }).length, 0)
const spec = () =>
  poolSpec({
    models: [
      { name: embedModel, tokenizer: 'qwen3', maxContextTokens: 8192, task: 'Embed' },
      { name: model, tokenizer: 'qwen3', maxContextTokens: 32_768 },
    ],
  })

/** Where the pool's pods publish KV events (any port: the stack wires each pod's own). */
const kvEventsOf = () => InferencePoolSpec.shape.kvEvents.parse({ port: 5557 })

/** Two pooling pods serving embedModel; the pool also names a generation model. */
function embeddingStack(): Promise<Stack> {
  return stacks.start({ pods: 2, spec: spec() })
}

/** The same pool started by hand, with a tracer and a log that keep what they get. */
async function tracedEmbeddingStack() {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  stacks.defer(() => provider.shutdown())
  const lines: LogFields[] = []
  const stack = stacks.closing(
    await startSimulatedPools({
      pools: [{ name: 'default', spec: spec() }],
      podsPerPool: 2,
      sim: { profile: l40s27bFp8, timeScale: 50, seed: 7, assets: loadSimModelAssets() },
      scorer: { signingSecrets: [secret], tracer: provider.getTracer('test') },
      log: (_message: string, fields: LogFields = {}) => lines.push(fields),
    }),
  )
  return { stack, lines, spans: () => exporter.getFinishedSpans() }
}

interface Embeddings {
  data: { index: number; object: string; embedding: number[] }[]
  model: string
  usage: { prompt_tokens: number; total_tokens: number }
}

async function embed(stack: Stack, body: object, claims: object = {}) {
  const answer = await send(stack, '/v1/embeddings', body, claims)
  return { ...answer, json: JSON.parse(answer.text) as Embeddings }
}

async function errorOf(stack: Stack, path: string, body: object | string) {
  const answer = await send(stack, path, body)
  const parsed = JSON.parse(answer.text) as {
    error: { type: string; code: string | null; param: string | null; message: string }
  }
  return { status: answer.status, error: parsed.error }
}

describe('the scorer serving /v1/embeddings', () => {
  it('answers with the pod’s vectors and usage, and its own count of the inputs', async () => {
    const stack = await embeddingStack()
    const inputs = ['The quick brown fox jumps over the lazy dog.', words(3, 60)]
    const body = { model: embedModel, input: inputs, encoding_format: 'float' }
    const answer = await embed(stack, body)
    expect(answer.status).toBe(200)
    expect(answer.json.model).toBe(embedModel)
    expect(answer.json.data.map((d) => [d.index, d.object])).toEqual([
      [0, 'embedding'],
      [1, 'embedding'],
    ])
    // The same body asked of a pod directly: the scorer passed its vectors on as they came.
    const pod = stack.pods.find((p) => p.config.podName === decisionOf(answer.headers).pod)
    const direct = (await (
      await fetch(`${pod?.url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as Embeddings
    expect(answer.json.data).toEqual(direct.data)
    expect(answer.json.usage.prompt_tokens).toBe(direct.usage.prompt_tokens)
    // The scorer's count is the tokenizer's, as the pod counted it.
    expect(answer.json.usage.prompt_tokens).toBe(countOf(inputs))
    expect(answer.headers.get('x-kinference-prompt-tokens')).toBe(String(countOf(inputs)))
  })

  it('counts token-id inputs as given, truncated ones as vLLM cuts them, and refuses an id out of the vocabulary', async () => {
    const stack = await embeddingStack()
    const ids = await embed(stack, {
      model: embedModel,
      input: [
        [11, 12, 13],
        [14, 15],
      ],
    })
    expect(ids.status).toBe(200)
    expect(ids.json.usage.prompt_tokens).toBe(5)
    expect(ids.headers.get('x-kinference-prompt-tokens')).toBe('5')
    // vLLM's truncate_prompt_tokens keeps the last 5 tokens of each input: counted so too.
    const cut = await embed(stack, {
      model: embedModel,
      input: [words(1, 40), 'hi'],
      truncate_prompt_tokens: 5,
    })
    expect(cut.status).toBe(200)
    const kept = 5 + Math.min(5, countOf(['hi']))
    expect(cut.json.usage.prompt_tokens).toBe(kept)
    expect(cut.headers.get('x-kinference-prompt-tokens')).toBe(String(kept))
    const outside = await errorOf(stack, '/v1/embeddings', {
      model: embedModel,
      input: [1, tokenizer.vocabSize + 5],
    })
    expect(outside.status).toBe(400)
    expect(outside.error).toMatchObject({ type: 'invalid_request_error', param: 'input' })
    expect(outside.error.message).toContain('out of vocabulary')
  })

  it('spreads concurrent requests over both pods by load', async () => {
    const stack = await embeddingStack()
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        embed(stack, { model: embedModel, input: words(i, 300) }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200))
    await stack.scorer.flushState()
    const decisions = joinDecisions(await stack.scorer.state.readDecisions({}))
    expect(decisions).toHaveLength(8)
    const pods = new Set(decisions.map((d) => d.pod))
    expect([...pods].sort()).toEqual(stack.pods.map((p) => p.config.podName).sort())
    // Nothing of an embedding is indexed: no pod ever matched a token of one.
    expect(decisions.every((d) => d.matchedTokens === 0)).toBe(true)
  })

  it('routes a caching pooling pool (one with KV events) to the pod holding the first input’s prefix', async () => {
    // A LAST-pooling model with prefix caching: its pods publish KV events, and the spec says so.
    const stack = await stacks.start({ pods: 2, spec: { ...spec(), kvEvents: kvEventsOf() } })
    const shared = words(5, 600)
    const first = await embed(stack, { model: embedModel, input: [shared, 'first'] })
    expect(first.status).toBe(200)
    const warm = decisionOf(first.headers).pod as string
    for (const tail of ['second', 'third', 'fourth']) {
      const again = await embed(stack, { model: embedModel, input: [shared, tail] })
      expect(decisionOf(again.headers).pod).toBe(warm)
      expect(Number(decisionOf(again.headers).matched_tokens)).toBeGreaterThan(500)
    }
    // The pod did reuse the prefix it was sent for (its own count, not the scorer's).
    const pod = stack.pods.find((p) => p.config.podName === warm)
    const metrics = await (await fetch(`${pod?.url}/metrics`)).text()
    const hits = metrics.split('\n').find((l) => l.startsWith('vllm:prefix_cache_hits_total'))
    expect(Number(hits?.split(' ').at(-1))).toBeGreaterThan(1500)
  })

  it('logs the decision, the access line and the pod’s span with the prompt tokens and no completion', async () => {
    const { stack, lines, spans } = await tracedEmbeddingStack()
    const input = words(9, 40)
    const answer = await embed(stack, { model: embedModel, input }, { tenant: 'acme' })
    expect(answer.status).toBe(200)
    const promptTokens = countOf([input])
    await stack.scorer.flushState()
    const [decision] = joinDecisions(await stack.scorer.state.readDecisions({}))
    expect(decision).toMatchObject({
      tenant: 'acme',
      pool: 'default',
      pod: decisionOf(answer.headers).pod,
      model: embedModel,
      promptTokens,
      matchedTokens: 0,
      end: { outcome: 'completed', status: 200, outputTokens: 0, ttftMs: null },
    })
    const access = () => lines.filter((fields) => fields.kind === 'access')
    await until(() => access().length > 0)
    expect(access()[0]).toMatchObject({
      method: 'POST',
      path: '/v1/embeddings',
      status: 200,
      tenant: 'acme',
      model: embedModel,
      pool: 'default',
      answered_by: 'pod',
      prompt_tokens: promptTokens,
      completion_tokens: 0,
    })
    await until(() => spans().some((span) => span.name === `embeddings ${embedModel}`))
    const podSpan = spans().find((span) => span.name === `embeddings ${embedModel}`)
    expect(podSpan?.attributes).toMatchObject({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.request.model': embedModel,
      'gen_ai.usage.input_tokens': promptTokens,
      'gen_ai.usage.output_tokens': 0,
    })
    expect(podSpan?.attributes['gen_ai.request.max_tokens']).toBeUndefined()
  })
})

describe('the scorer serving embeddings for a pool whose tokenizer cannot be loaded', () => {
  it('routes on the edge’s estimate of the inputs, marked as such by its count', async () => {
    const pods = await startSimFleet({
      pods: 2,
      profile: l40s27bFp8,
      modelName: embedModel,
      port: 0,
      zmqPort: 0,
      timeScale: 50,
      seed: 5,
      eventEncoding: 'map',
      assets: loadSimModelAssets(),
      runner: 'pooling',
    })
    for (const pod of pods) stacks.closing(pod)
    const pool = {
      name: 'default',
      spec: poolSpec({
        models: [
          {
            name: embedModel,
            tokenizer: '/nonexistent/dir',
            maxContextTokens: 8192,
            task: 'Embed',
          },
        ],
      }),
    }
    const scorer = stacks.closing(
      await startScorerOver([{ pool, pods }], { signingSecrets: [secret] }, () => {}),
    )
    const stack = { pods, scorer, close: async () => {} }
    const body = { model: embedModel, input: ['Ünïcödé text, estimated.', words(4, 50)] }
    const answer = await embed(stack, body)
    expect(answer.status).toBe(200)
    const estimate = estimateEmbeddingTokens(embeddingInputs(OpenAiEmbeddingRequest.parse(body)))
    expect(answer.headers.get('x-kinference-prompt-tokens')).toBe(String(estimate))
    // The pod counted with the tokenizer the scorer could not load: another number.
    expect(answer.json.usage.prompt_tokens).toBe(countOf(body.input))
    expect(estimate).not.toBe(countOf(body.input))
    await stack.scorer.flushState()
    const [decision] = joinDecisions(await stack.scorer.state.readDecisions({}))
    expect(decision).toMatchObject({ promptTokens: estimate, end: { status: 200 } })
  })
})

describe('the scorer refusing what a pool’s models do not serve', () => {
  it('refuses chat and completions to an embedding model before any pod is asked', async () => {
    const stack = await embeddingStack()
    const chat = await errorOf(stack, '/v1/chat/completions', {
      model: embedModel,
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(chat.status).toBe(400)
    expect(chat.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_supported',
      param: 'model',
      message: `\`${embedModel}\` is an embedding model: it serves /v1/embeddings, not /v1/chat/completions`,
    })
    const completion = await errorOf(stack, '/v1/completions', { model: embedModel, prompt: 'hi' })
    expect(completion.status).toBe(400)
    expect(completion.error.code).toBe('model_not_supported')
    expect(completion.error.message).toContain('not /v1/completions')
    await stack.scorer.flushState()
    expect(await stack.scorer.state.readDecisions({})).toEqual([])
  })

  it('refuses embeddings for a generation model, an unknown model, and a malformed body', async () => {
    const stack = await embeddingStack()
    const generation = await errorOf(stack, '/v1/embeddings', { model, input: 'hello' })
    expect(generation.status).toBe(400)
    expect(generation.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'model_not_supported',
      param: 'model',
      message: `\`${model}\` is a generation model: it serves /v1/chat/completions and /v1/completions, not /v1/embeddings`,
    })
    const unknown = await errorOf(stack, '/v1/embeddings', { model: 'no-such-model', input: 'x' })
    expect(unknown.status).toBe(404)
    expect(unknown.error).toMatchObject({ code: 'model_not_found', param: 'model' })
    const empty = await errorOf(stack, '/v1/embeddings', { model: embedModel, input: [] })
    expect(empty.status).toBe(400)
    expect(empty.error).toMatchObject({ type: 'invalid_request_error', param: 'input' })
    const notJson = await errorOf(stack, '/v1/embeddings', '{"model":')
    expect(notJson.status).toBe(400)
    expect(notJson.error.type).toBe('invalid_request_error')
    await stack.scorer.flushState()
    expect(await stack.scorer.state.readDecisions({})).toEqual([])
  })
})
