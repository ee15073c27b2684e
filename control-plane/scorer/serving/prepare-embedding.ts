import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { checkJsonDepth } from '../../../shared/openai/json-depth.ts'
import {
  type EmbeddingInput,
  embeddingInputs,
  estimateEmbeddingTokens,
  parseOpenAiEmbedding,
} from '../../../shared/openai/openai-embedding-request.ts'
import type { Tokenizer } from '../../tokenizer/tokenizer.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'
import type { PreparedRequest } from './prepare-request.ts'

function invalid(message: string, param: string | null, openAiCode = 'invalid_request'): KinfError {
  return new KinfError('invalid_request', message, { param, openAiCode })
}

/**
 * Parses a /v1/embeddings body, finds the pool serving its model with task Embed (among
 * `pools`), and counts its tokens as the pods will: the pool's tokenizer when it loads,
 * else the edge's estimate (estimated). Routed on load, or also on the prefix cache where
 * the pool's pods publish KV events (see below).
 */
export function prepareEmbedding(
  id: string,
  body: unknown,
  pools: readonly PoolRuntime[],
  /** Who is charged for it in the pool's token-fair admission; '': anonymous. */
  tenant = '',
): PreparedRequest {
  // As prepareRequest: a scorer may be called by something other than the edge.
  checkJsonDepth(body)
  const parsed = parseOpenAiEmbedding(body)
  if ('issues' in parsed) throw invalid(parsed.issues.message, parsed.issues.param)
  const { request: openAi } = parsed
  const { model } = openAi
  // A pool declaring the model as an embedding model first, over a "*" that takes anything.
  const pool =
    pools.find((candidate) => candidate.serves(model)?.model.task === 'Embed') ??
    pools.find((candidate) => candidate.serves(model) !== null)
  const served = pool?.serves(model)
  if (!pool || !served) {
    throw new KinfError('not_found', `The model \`${model}\` does not exist.`, {
      param: 'model',
      openAiCode: 'model_not_found',
    })
  }
  // vLLM's generate runner has no /v1/embeddings: refused here, not a 404 from the pod.
  if (served.model.task === 'Generate') {
    throw invalid(
      `\`${model}\` is a generation model: it serves /v1/chat/completions and /v1/completions, not /v1/embeddings`,
      'model',
      'model_not_supported',
    )
  }
  const inputs = embeddingInputs(openAi)
  const keep = keptTokens(openAi.truncate_prompt_tokens, served.model.maxContextTokens)
  const counted =
    served.tokenizer === null
      ? null
      : countTokens(served.tokenizer, inputs, {
          addSpecialTokens: openAi.add_special_tokens !== false,
          keep,
        })
  const promptTokens = counted?.tokens ?? estimateEmbeddingTokens(inputs)
  // Block keys only where the pods cache the prefix and say so: a pool with KV events is a
  // LAST-pooling model with prefix caching on (docs/vllm-wire.md, "Prefix caching"); most
  // pooling pods cache nothing (encoders, MEAN or CLS pooling), and a key there would leave
  // a speculative index entry on a pod that never holds it. Keyed on the first input, as
  // vLLM runs each input as its own request: a batch that shares a prefix (an instruction)
  // goes where that prefix is. A truncated input is cut where the pod cuts it, so unkeyed.
  const keyed = pool.spec.kvEvents !== undefined && keep === null ? counted?.firstIds : undefined
  // maxTokens 1: an embedding is a prefill only.
  const prepared = pool.router.prepare({
    id,
    model,
    promptIds: keyed ?? [],
    maxTokens: 1,
    cacheSalt: null,
    promptText: () => (keyed === undefined ? '' : firstText(inputs)),
    ...(tenant !== '' ? { tenant } : {}),
  })
  const request = { ...prepared, routing: { ...prepared.routing, promptTokens } }
  return {
    podPath: '/v1/embeddings',
    operation: 'embeddings',
    maxTokens: null,
    pool,
    model,
    request,
    stream: false,
    estimated: counted === null,
    promptIds: keyed ?? null,
  }
}

/**
 * The tokens vLLM keeps of each input given its `truncate_prompt_tokens` (-1: the model's
 * context; k: k), as control-plane/lab/sim/embedding-request.ts applies it; null: all.
 * A value vLLM refuses is left for the pod to refuse.
 */
function keptTokens(truncate: unknown, maxContextTokens: number): number | null {
  if (truncate === -1) return maxContextTokens
  return Number.isInteger(truncate) && (truncate as number) > 0 ? (truncate as number) : null
}

/**
 * The tokens of every input as vLLM's pooling server counts them: a text encoded with the
 * special tokens unless `add_special_tokens` is false, token ids as given (each in the
 * vocabulary, as control-plane/tokenizer/prompt-ids.ts checks a completion's), each cut
 * to what truncation keeps.
 */
function countTokens(
  tokenizer: Tokenizer,
  inputs: readonly EmbeddingInput[],
  options: { addSpecialTokens: boolean; keep: number | null },
): { tokens: number; firstIds: readonly number[] } {
  let tokens = 0
  let firstIds: readonly number[] | null = null
  for (const input of inputs) {
    let ids: readonly number[]
    if ('text' in input) {
      ids = tokenizer.encode(input.text, { addSpecialTokens: options.addSpecialTokens })
    } else {
      const outside = input.ids.find((tokenId) => tokenId >= tokenizer.vocabSize)
      if (outside !== undefined) throw invalid(`Token id ${outside} is out of vocabulary`, 'input')
      ids = input.ids
    }
    firstIds ??= ids
    tokens += options.keep === null ? ids.length : Math.min(ids.length, options.keep)
  }
  return { tokens, firstIds: firstIds ?? [] }
}

/** The first input's text, for a strategy that reads the prompt's characters. */
function firstText(inputs: readonly EmbeddingInput[]): string {
  const [first] = inputs
  return first && 'text' in first ? first.text : ''
}
