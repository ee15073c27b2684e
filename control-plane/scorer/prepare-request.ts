import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  maxTokensOf,
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../shared/openai/openai-request.ts'
import type { PoolRequest } from '../../shared/pool/pool-router.ts'
import { promptIds } from '../tokenizer/prompt-ids.ts'
import type { PoolRuntime } from './pool-runtime.ts'

/** A request ready to route: its pool, and its token ids and block keys as the pod will see them. */
export interface PreparedRequest {
  openAi: OpenAiRequest
  pool: PoolRuntime
  model: string
  request: PoolRequest
  stream: boolean
}

function invalid(message: string, param: string | null, openAiCode = 'invalid_request'): KinfError {
  return new KinfError('invalid_request', message, { param, openAiCode })
}

/**
 * Parses a chat or completions body, finds the pool serving its model, and tokenizes it
 * exactly as that pool's pods will (chat template included). The tokenizer caches the
 * text between special tokens, so a long shared system prompt is tokenized once.
 */
export function prepareRequest(
  id: string,
  kind: RequestKind,
  body: unknown,
  pools: readonly PoolRuntime[],
): PreparedRequest {
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) throw invalid(parsed.issues.message, parsed.issues.param)
  const openAi = parsed.request
  const model = openAi.body.model ?? soleModel(pools)
  const match = pools
    .map((pool) => ({ pool, served: pool.serves(model) }))
    .find((m) => m.served !== null)
  if (!match?.served) {
    throw new KinfError('not_found', `The model \`${model}\` does not exist.`, {
      param: 'model',
      openAiCode: 'model_not_found',
    })
  }
  const { pool, served } = match
  let ids: number[]
  try {
    ids = promptIds(served.tokenizer, openAi)
  } catch (error) {
    if (KinfError.isInstance(error) && error.param !== null) throw error
    throw invalid((error as Error).message, kind === 'chat' ? 'messages' : 'prompt')
  }
  const { maxContextTokens } = served.model
  if (ids.length >= maxContextTokens) {
    throw invalid(
      `This model's maximum context length is ${maxContextTokens} tokens; the prompt has ${ids.length}.`,
      'messages',
      'context_length_exceeded',
    )
  }
  const prepared = pool.router.prepare({
    id,
    model,
    promptIds: ids,
    maxTokens: maxTokensOf(openAi) ?? pool.router.expectedOutputTokens,
    cacheSalt: openAi.body.cache_salt ?? null,
    promptText: () =>
      openAi.kind === 'chat' ? JSON.stringify(openAi.body.messages) : String(openAi.body.prompt),
  })
  return { openAi, pool, model, request: prepared, stream: openAi.body.stream === true }
}

function soleModel(pools: readonly PoolRuntime[]): string {
  const models = pools.flatMap((pool) => pool.spec.models.map((m) => m.name))
  if (models.length === 1) return models[0] as string
  throw invalid('model is required: this scorer serves several models', 'model')
}
