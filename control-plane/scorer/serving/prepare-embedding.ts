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
 * else the edge's estimate (estimated). Routed on load alone (see below).
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
  const pool = pools.find((candidate) => candidate.serves(model) !== null)
  const served = pool?.serves(model)
  if (!pool || !served) {
    throw new KinfError('not_found', `The model \`${model}\` does not exist.`, {
      param: 'model',
      openAiCode: 'model_not_found',
    })
  }
  // vLLM's generate runner has no /v1/embeddings: refused here, not a 404 from the pod.
  if (served.model.task !== 'Embed') {
    throw invalid(
      `\`${model}\` is a generation model: it serves /v1/chat/completions and /v1/completions, not /v1/embeddings`,
      'model',
      'model_not_supported',
    )
  }
  const inputs = embeddingInputs(openAi)
  const counted =
    served.tokenizer === null
      ? null
      : countTokens(served.tokenizer, inputs, {
          addSpecialTokens: openAi.add_special_tokens !== false,
          keep: keptTokens(openAi.truncate_prompt_tokens, served.model.maxContextTokens),
        })
  const promptTokens = counted ?? estimateEmbeddingTokens(inputs)
  // Routed on load alone, with no block keys: most pooling pods cache no prefix (vLLM turns
  // prefix caching off for encoders and MEAN or CLS pooling; the simulator models none:
  // docs/vllm-wire.md, "Prefix caching"), and a key would leave a speculative index entry
  // on a pod that never holds it, misleading the cache-aware routing of whatever shares
  // the index. A LAST-pooling model that caches is routed on load too, for now.
  // maxTokens 1: an embedding is a prefill only.
  const keyless = pool.router.prepare({
    id,
    model,
    promptIds: [],
    maxTokens: 1,
    cacheSalt: null,
    promptText: () => '',
    ...(tenant !== '' ? { tenant } : {}),
  })
  const request = { ...keyless, routing: { ...keyless.routing, promptTokens } }
  return {
    podPath: '/v1/embeddings',
    operation: 'embeddings',
    maxTokens: null,
    pool,
    model,
    request,
    stream: false,
    estimated: counted === null,
    promptIds: null,
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
): number {
  let tokens = 0
  for (const input of inputs) {
    let length: number
    if ('text' in input) {
      length = tokenizer.encode(input.text, { addSpecialTokens: options.addSpecialTokens }).length
    } else {
      const outside = input.ids.find((tokenId) => tokenId >= tokenizer.vocabSize)
      if (outside !== undefined) throw invalid(`Token id ${outside} is out of vocabulary`, 'input')
      length = input.ids.length
    }
    tokens += options.keep === null ? length : Math.min(length, options.keep)
  }
  return tokens
}
