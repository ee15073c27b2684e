import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { estimateRequestPromptTokens } from '../../../shared/openai/estimate-request-tokens.ts'
import { checkJsonDepth } from '../../../shared/openai/json-depth.ts'
import {
  maxTokensOf,
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../../shared/openai/openai-request.ts'
import { anyModel, type PoolRequest } from '../../../shared/routing/pool-router.ts'
import type { GenAiOperation } from '../../../shared/tracing/gen-ai-attributes.ts'
import type { Prompt } from '../../tokenizer/prompt-ids.ts'
import type { PoolRuntime } from '../pools/pool-runtime.ts'

/** The OpenAI routes the scorer sends a pod: the one the client asked for. */
export type PodRoutePath = '/v1/chat/completions' | '/v1/completions' | '/v1/embeddings'

/** A request ready to route: its pool, and its token ids and block keys as the pod will see them. */
export interface PreparedRequest {
  /** The pod's route it goes to, and what that call is as the GenAI conventions name it. */
  podPath: PodRoutePath
  operation: GenAiOperation
  /** The client's max_tokens (max_completion_tokens); null when it set none or embeds. */
  maxTokens: number | null
  pool: PoolRuntime
  model: string
  request: PoolRequest
  stream: boolean
  /**
   * The pool cannot load the model's tokenizer: the prompt's length is the edge's estimate
   * and it has no block keys, so the pool routes it on load alone.
   */
  estimated: boolean
  /** The prompt's ids as the pod will run them; null when estimated, and for embeddings. */
  promptIds: readonly number[] | null
}

function invalid(message: string, param: string | null, openAiCode = 'invalid_request'): KinfError {
  return new KinfError('invalid_request', message, { param, openAiCode })
}

/**
 * Parses a chat or completions body, finds the pool serving its model (among `pools`),
 * and prepares it there (see PoolRuntime.prepare).
 */
export function prepareRequest(
  id: string,
  kind: RequestKind,
  body: unknown,
  pools: readonly PoolRuntime[],
  /** The JSON text `body` was parsed from, when the caller has it (see prepareOnPool). */
  bodyText: string | null = null,
  /** Who is charged for it in the pool's token-fair admission; '': anonymous. */
  tenant = '',
): PreparedRequest {
  // A body nested past the edge's limit is refused here too: a scorer may be called by
  // something other than the edge, and the pods would parse and carry all of it.
  checkJsonDepth(body)
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) throw invalid(parsed.issues.message, parsed.issues.param)
  const openAi = parsed.request
  const model = openAi.body.model ?? soleModel(pools)
  const pool = pools.find((candidate) => candidate.serves(model) !== null)
  if (!pool) {
    throw new KinfError('not_found', `The model \`${model}\` does not exist.`, {
      param: 'model',
      openAiCode: 'model_not_found',
    })
  }
  return prepareOnPool(id, openAi, pool, model, new Map(), bodyText, tenant)
}

/**
 * Tokenizes a parsed request exactly as `pool`'s pods will for `model` (chat template
 * included) and computes its block keys. The tokenizer caches the text between special
 * tokens, so a long shared system prompt is tokenized once. A pool that cannot load the
 * model's tokenizer gets the request without block keys, its length estimated as the edge
 * estimates it (shared/openai/estimate-request-tokens.ts): routed on load alone, and the
 * context length left for the pod to check.
 */
export function prepareOnPool(
  id: string,
  openAi: OpenAiRequest,
  pool: PoolRuntime,
  model: string,
  /** Prompts by tokenizer name, for a request prepared on several pools: tokenized once. */
  tokenized: Map<string, Prompt> = new Map(),
  /**
   * The JSON text the pod gets, when it is the text `openAi` was parsed from: a chat's tool
   * schemas then print their numbers as the pod's Python reads them (`50.0` stays a
   * float; see chatTemplateOptions). Null when the pod gets `openAi` re-serialized.
   */
  bodyText: string | null = null,
  /** Who is charged for it in the pool's token-fair admission; '' or absent: anonymous. */
  tenant = '',
): PreparedRequest {
  checkJsonDepth(openAi.body)
  const served = pool.serves(model)
  if (!served) {
    throw new KinfError('not_found', `The model \`${model}\` is not served by pool ${pool.name}.`, {
      param: 'model',
      openAiCode: 'model_not_found',
    })
  }
  const podPath = openAi.kind === 'chat' ? '/v1/chat/completions' : '/v1/completions'
  // vLLM's pooling runner has no completions routes: refused here, not a 404 from the pod.
  if (served.model.task === 'Embed') {
    throw invalid(
      `\`${model}\` is an embedding model: it serves /v1/embeddings, not ${podPath}`,
      'model',
      'model_not_supported',
    )
  }
  const asked = {
    podPath,
    operation: openAi.kind === 'chat' ? 'chat' : 'text_completion',
    maxTokens: maxTokensOf(openAi),
  } as const
  const input = {
    id,
    model,
    maxTokens: asked.maxTokens ?? pool.router.expectedOutputTokens,
    cacheSalt: openAi.body.cache_salt ?? null,
    promptText: () =>
      openAi.kind === 'chat' ? JSON.stringify(openAi.body.messages) : String(openAi.body.prompt),
    ...(tenant !== '' ? { tenant } : {}),
  }
  const stream = openAi.body.stream === true
  if (served.tokenizer === null) {
    // No block keys: every pod holds nothing of it, and the estimate sizes its prefill.
    const keyless = pool.router.prepare({ ...input, promptIds: [] })
    const routing = { ...keyless.routing, promptTokens: estimateRequestPromptTokens(openAi) }
    const request = { ...keyless, routing }
    return { ...asked, pool, model, request, stream, estimated: true, promptIds: null }
  }
  // The same tokenizer gives other ids from the raw text than from the parsed body.
  const key = `${served.model.tokenizer}\u0000${bodyText === null ? 'parsed' : 'text'}`
  let prompt = tokenized.get(key)
  try {
    prompt ??= pool.tokenize(served.tokenizer, openAi, bodyText)
    tokenized.set(key, prompt)
  } catch (error) {
    if (KinfError.isInstance(error) && error.param !== null) throw error
    throw invalid((error as Error).message, openAi.kind === 'chat' ? 'messages' : 'prompt')
  }
  const { maxContextTokens } = served.model
  const { ids, mmFeatures } = prompt
  if (ids.length >= maxContextTokens) {
    throw invalid(
      `This model's maximum context length is ${maxContextTokens} tokens; the prompt has ${ids.length}.`,
      'messages',
      'context_length_exceeded',
    )
  }
  const request = pool.router.prepare({ ...input, promptIds: ids, mmFeatures })
  return { ...asked, pool, model, request, stream, estimated: false, promptIds: ids }
}

function soleModel(pools: readonly PoolRuntime[]): string {
  const models = pools.flatMap((pool) => pool.spec.models.map((m) => m.name))
  if (models.length === 1 && models[0] !== anyModel) return models[0] as string
  throw invalid('model is required: this scorer serves several models', 'model')
}
