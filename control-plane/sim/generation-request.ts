import { KinfError } from '../../shared/errors/kinf-error.ts'
import type {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../shared/openai/chat-completion-request.ts'
import {
  maxTokensField,
  maxTokensOf,
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../shared/openai/openai-request.ts'
import { promptIds } from '../tokenizer/prompt-ids.ts'
import type { Tokenizer } from '../tokenizer/tokenizer.ts'
import { badRequest, VllmError } from './vllm-error.ts'

/** A generation request after vLLM's checks: token ids in, limits and stream options. */
export interface GenerationRequest {
  kind: RequestKind
  promptTokenIds: number[]
  maxTokens: number
  minTokens: number
  ignoreEos: boolean
  stream: boolean
  includeUsage: boolean
  continuousUsage: boolean
  cacheSalt: string | null
  requestedModel: string | null
}

export interface ModelLimits {
  modelName: string
  maxModelLen: number
}

/**
 * Parses a chat or completions body the way vLLM's OpenAI server does: unknown fields
 * are ignored, wrong types and out-of-range sampling parameters are 400s with vLLM's
 * messages, an unknown model is a 404, and prompts that do not fit the context are 400s.
 */
export function parseGenerationRequest(
  kind: RequestKind,
  body: unknown,
  tokenizer: Tokenizer,
  limits: ModelLimits,
): GenerationRequest {
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) throw badRequest(parsed.issues.message)
  const openAi = parsed.request
  const request = openAi.body
  if (request.model !== undefined && request.model !== limits.modelName) {
    throw new VllmError(404, `The model \`${request.model}\` does not exist.`, 'model')
  }
  checkSampling(request)
  const promptTokenIds = tokenize(openAi, tokenizer)
  const inputTokens = promptTokenIds.length
  const requested = maxTokensOf(openAi)
  if (requested !== null && requested < 1) {
    const field = maxTokensField(openAi)
    throw badRequest(`${field} must be at least 1, got ${requested}.`, field)
  }
  checkContext(inputTokens, requested, limits.maxModelLen)
  const maxTokens = requested ?? limits.maxModelLen - inputTokens
  const minTokens = request.min_tokens ?? 0
  if (minTokens < 0)
    throw badRequest(`min_tokens must be greater than or equal to 0, got ${minTokens}.`)
  if (minTokens > maxTokens) {
    throw badRequest(
      `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`,
    )
  }
  if (!request.stream && request.stream_options) {
    throw badRequest('Stream options can only be defined when `stream=True`.', 'stream_options')
  }
  if (request.cache_salt === '')
    throw badRequest('Parameter cache_salt must be a non-empty string.', 'cache_salt')
  return {
    kind,
    promptTokenIds,
    maxTokens,
    minTokens,
    ignoreEos: request.ignore_eos === true,
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
    continuousUsage: request.stream_options?.continuous_usage_stats === true,
    cacheSalt: request.cache_salt ?? null,
    requestedModel: request.model ?? null,
  }
}

/** SamplingParams._verify_args, with its messages. */
function checkSampling(request: ChatCompletionRequest | CompletionRequest): void {
  const { n, temperature, top_p: topP } = request
  if (n !== null && n !== undefined && n < 1)
    throw badRequest(`n must be at least 1, got ${n}.`, 'n')
  if (n !== null && n !== undefined && n > 1) {
    throw badRequest(`n must be 1 on this simulator, got ${n}.`, 'n')
  }
  if (temperature !== null && temperature !== undefined && temperature < 0) {
    throw badRequest(`temperature must be non-negative, got ${temperature}.`, 'temperature')
  }
  if (topP !== null && topP !== undefined && !(topP > 0 && topP <= 1)) {
    throw badRequest(`top_p must be in (0, 1], got ${topP}.`, 'top_p')
  }
}

function tokenize(request: OpenAiRequest, tokenizer: Tokenizer): number[] {
  try {
    return promptIds(tokenizer, request)
  } catch (error) {
    if (!KinfError.isInstance(error)) throw error
    throw badRequest(
      error.message,
      error.param ?? (request.kind === 'chat' ? 'messages' : 'prompt'),
    )
  }
}

/** vLLM's context-length checks, with its messages. */
function checkContext(inputTokens: number, maxTokens: number | null, maxModelLen: number): void {
  if (inputTokens === 0) throw badRequest('The prompt cannot be empty.', 'prompt')
  if (inputTokens >= maxModelLen) {
    throw badRequest(
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${inputTokens} input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=${inputTokens})`,
      'input_tokens',
    )
  }
  if (maxTokens !== null && inputTokens + maxTokens > maxModelLen) {
    throw badRequest(
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${maxTokens} output tokens and your prompt contains at least ${inputTokens} input tokens, for a total of at least ${inputTokens + maxTokens} tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${inputTokens})`,
      'input_tokens',
    )
  }
}
