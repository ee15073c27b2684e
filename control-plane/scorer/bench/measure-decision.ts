import { InferencePoolSpec } from '../../../shared/crd/inference-pool.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { createStableVocabulary } from '../../tokenizer/create-stable-vocabulary.ts'
import { createTokenizerCache, PoolRuntime } from '../pool-runtime.ts'
import { prepareRequest } from '../prepare-request.ts'

export interface DecisionTimes {
  promptTokens: number
  pods: number
  warm: { p50Ms: number; p99Ms: number }
  cold: { p50Ms: number; p99Ms: number }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}

/**
 * The scorer's decision path, as handleInference runs it minus HTTP: parse and tokenize a
 * chat request (chat template), compute its block keys, one index lookup over every pod,
 * and the strategy's choice. An ~8,000-token prompt over 32 pods whose in-memory index
 * holds parts of it. Warm: the same long system prompt with a new question each time (the
 * tokenizer's segment cache holds the system prompt). Cold: a system prompt never seen.
 */
export async function measureDecision(options: {
  pods: number
  promptWords: number
  samples: number
  seed: number
}): Promise<DecisionTimes> {
  const random = createSeededRandom(options.seed)
  const index = createMemoryKvIndex()
  const tokenizers = createTokenizerCache()
  const spec = InferencePoolSpec.parse({
    selector: { matchLabels: {} },
    targetPort: 8000,
    models: [{ name: 'bench', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    gpuProfile: 'l40s-27b-fp8',
  })
  const pool = new PoolRuntime({
    name: 'bench',
    spec,
    index,
    tokenizers,
    random,
    onError: () => {},
  })
  const pods = Array.from({ length: options.pods }, (_, i) => `pod-${i}`)
  for (const pod of pods) {
    pool.router.addPod(pod, 0)
    pool.router.setIndexReady(pod, true)
  }
  const words = createStableVocabulary(tokenizers('qwen3')).words.map((w) => w.word)
  const text = (count: number) =>
    Array.from({ length: count }, () => words[Math.floor(random() * words.length)]).join(' ')
  const body = (system: string) => ({
    model: 'bench',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: text(40) },
    ],
  })
  const system = text(options.promptWords)
  // Pods hold various prefixes of the prompt, as after real traffic.
  const first = prepareRequest('seed', 'chat', body(system), [pool])
  const { keys } = first.request
  for (const [i, pod] of pods.entries()) {
    const blocks = Math.floor(((keys.length / 2) * (i % 4)) / 3)
    await index.addSpeculative(pod, keys, blocks, Number.MAX_SAFE_INTEGER)
  }
  const decide = async (request: object, id: string) => {
    const started = performance.now()
    const prepared = prepareRequest(id, 'chat', request, [pool])
    const lookup = await pool.router.lookup(prepared.request)
    const route = pool.router.score(lookup, 0)
    if (route.decision.pod === null) throw new Error('no decision')
    return performance.now() - started
  }
  for (let i = 0; i < 200; i++) await decide(body(system), `w${i}`)
  const warm: number[] = []
  for (let i = 0; i < options.samples; i++) warm.push(await decide(body(system), `warm${i}`))
  const cold: number[] = []
  for (let i = 0; i < Math.min(options.samples, 200); i++)
    cold.push(await decide(body(text(options.promptWords)), `cold${i}`))
  return {
    promptTokens: first.request.routing.promptTokens,
    pods: options.pods,
    warm: { p50Ms: quantile(warm, 0.5), p99Ms: quantile(warm, 0.99) },
    cold: { p50Ms: quantile(cold, 0.5), p99Ms: quantile(cold, 0.99) },
  }
}
