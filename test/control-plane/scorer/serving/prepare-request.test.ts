import { describe, expect, it } from 'vitest'
import { parseGenerationRequest } from '../../../../control-plane/lab/sim/generation-request.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { PoolRuntime } from '../../../../control-plane/scorer/pools/pool-runtime.ts'
import { prepareRequest } from '../../../../control-plane/scorer/serving/prepare-request.ts'
import { TokenizerCache } from '../../../../control-plane/scorer/serving/tokenizer-cache.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { computeBlockKeys } from '../../../../shared/kv-index/block-keys.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import type { RequestKind } from '../../../../shared/openai/openai-request.ts'
import { createEdgeMetrics } from '../../../../workers/app/edge-metrics.ts'
import { readEdgeRequest } from '../../../../workers/app/read-edge-request.ts'
import { exampleSnapshot } from '../../../shared/policy/example-snapshot.ts'
import { model, poolSpec } from '../../../support/scorer-stack.ts'

const tokenizers = new TokenizerCache()
const pool = new PoolRuntime({
  name: 'default',
  spec: poolSpec(),
  index: createMemoryKvIndex(),
  tokenizers,
  onError: () => {},
})
const limits = { modelName: model, maxModelLen: 32_768 }
const messages = [{ role: 'user', content: 'How long is a piece of string?' }]

/** What the edge, the scorer and a vLLM pod each make of one body. */
async function readings(kind: RequestKind, body: Record<string, unknown>) {
  const full = { model, ...body }
  const edge = readEdgeRequest(
    await exampleSnapshot(),
    kind,
    { tenant: 't', keyId: 'k' },
    JSON.stringify(full),
    undefined,
    createEdgeMetrics(),
  )
  const scorer = prepareRequest('r', kind, full, [pool])
  // The pod's own model, so the router's reading is compared with an independent one.
  const pod = parseGenerationRequest(kind, full, loadSimModelAssets('qwen3').tokenizer, limits)
  return { edge, scorer: scorer.request, pod }
}

describe('the scorer reads a request as the edge and the pods do', () => {
  it.each([
    ['chat', { messages, max_tokens: 10, max_completion_tokens: 20 }, 20],
    ['chat', { messages, max_tokens: 10 }, 10],
    ['chat', { messages, max_completion_tokens: 30 }, 30],
    ['completion', { prompt: 'Once upon', max_tokens: 12 }, 12],
  ] as const)('%s %j: max tokens %i everywhere', async (kind, body, expected) => {
    const { edge, scorer, pod } = await readings(kind, body)
    expect(edge.maxTokens).toBe(expected)
    expect(scorer.routing.maxTokens).toBe(expected)
    expect(pod.maxTokens).toBe(expected)
  })

  it('without a limit: the edge reserves its default, the pod may fill the context, the router plans the pool’s expected length', async () => {
    const { edge, scorer, pod } = await readings('chat', { messages })
    expect(edge.maxTokens).toBeNull()
    expect(pod.maxTokens).toBe(32_768 - pod.promptTokenIds.length)
    expect(scorer.routing.maxTokens).toBe(pool.router.expectedOutputTokens)
  })

  it('hashes the very ids the pod runs, continue_final_message included', async () => {
    const continued = {
      messages: [...messages, { role: 'assistant', content: 'It depends on' }],
      add_generation_prompt: false,
      continue_final_message: true,
    }
    for (const body of [{ messages }, continued, { prompt: 'Once upon a time' }]) {
      const kind = 'prompt' in body ? 'completion' : 'chat'
      const { scorer, pod } = await readings(kind, body)
      expect(scorer.routing.promptTokens).toBe(pod.promptTokenIds.length)
      expect(scorer.keys).toEqual(computeBlockKeys(pod.promptTokenIds, 16, { model }))
    }
  })

  it('refuses what the pod would refuse, with OpenAI’s field', () => {
    const error = (() => {
      try {
        prepareRequest('r', 'chat', { model, messages, continue_final_message: true }, [pool])
      } catch (caught) {
        return caught
      }
      return null
    })()
    expect(KinfError.isInstance(error) && [error.status, error.param]).toEqual([
      400,
      'continue_final_message',
    ])
  })
})
