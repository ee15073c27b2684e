import { KinfError } from '../../shared/errors/kinf-error.ts'
import type {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../shared/openai/chat-completion-request.ts'
import {
  maxTokensOf,
  type OpenAiRequest,
  parseOpenAiRequest,
  type RequestKind,
} from '../../shared/openai/openai-request.ts'
import { promptIds } from '../tokenizer/prompt-ids.ts'
import type { Tokenizer } from '../tokenizer/tokenizer.ts'
import { badRequest, pythonFloat, samplingError, VllmError, validationError } from './vllm-error.ts'

/** A generation request after vLLM's checks: token ids in, limits and stream options. */
export interface GenerationRequest {
  kind: RequestKind
  promptTokenIds: number[]
  /** Choices to generate, each its own sequence in the engine (vLLM's n). */
  n: number
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

/** VLLM_MAX_N_SEQUENCES' default (vllm/sampling_params.py). */
const maxSequences = 16_384
/** Below this temperature vLLM samples greedily (_SAMPLING_EPS). */
const greedyBelow = 1e-5

/**
 * Parses a chat or completions body the way vLLM's OpenAI server does: unknown fields
 * are ignored; what pydantic refuses (wrong types, the request's own validators) is a 400
 * "Bad Request" listing the errors; an unknown model is a 404; sampling parameters out of
 * range and prompts that do not fit the context are 400 BadRequestErrors with vLLM's
 * messages (docs/vllm-wire.md §4.1).
 */
export function parseGenerationRequest(
  kind: RequestKind,
  body: unknown,
  tokenizer: Tokenizer,
  limits: ModelLimits,
): GenerationRequest {
  const parsed = parseOpenAiRequest(kind, body)
  if ('issues' in parsed) {
    const { each } = parsed.issues
    const first = each[0]?.path ?? ''
    throw validationError(
      each.map((issue) => ({
        loc: issue.path === '' ? [] : issue.path.split('.'),
        msg: issue.message,
      })),
      first === '' ? 'body' : `body.${first}`,
    )
  }
  const openAi = parsed.request
  const request = openAi.body
  checkRequestValidators(request)
  if (request.model !== undefined && request.model !== limits.modelName) {
    throw new VllmError(404, `The model \`${request.model}\` does not exist.`, 'model')
  }
  checkSampling(request)
  const promptTokenIds = tokenize(openAi, tokenizer)
  const inputTokens = promptTokenIds.length
  const requested = maxTokensOf(openAi)
  if (requested !== null && requested < 1) {
    throw samplingError(
      `max_tokens must be at least 1, got ${requested}.`,
      'max_tokens',
      `${requested}`,
    )
  }
  checkContext(inputTokens, requested, limits.maxModelLen)
  const maxTokens = requested ?? limits.maxModelLen - inputTokens
  const minTokens = request.min_tokens ?? 0
  if (minTokens < 0)
    throw samplingError(`min_tokens must be greater than or equal to 0, got ${minTokens}.`)
  if (minTokens > maxTokens) {
    throw samplingError(
      `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`,
    )
  }
  return {
    kind,
    promptTokenIds,
    n: request.n ?? 1,
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

/**
 * The request models' own validators (model_validator before pydantic fills the fields):
 * what they refuse is a validation error, as FastAPI reports it. Truthiness as in Python:
 * an empty stream_options is no options.
 */
function checkRequestValidators(request: ChatCompletionRequest | CompletionRequest): void {
  const options = request.stream_options
  if (!request.stream && options && Object.keys(options).length > 0) {
    throw validationError(
      [
        {
          loc: [],
          msg: 'Value error, Stream options can only be defined when `stream=True`. (parameter=stream_options)',
        },
      ],
      'stream_options',
    )
  }
  if (request.cache_salt === '') {
    throw validationError(
      [
        {
          loc: [],
          msg: "Value error, Parameter 'cache_salt' must be a non-empty string if provided.",
        },
      ],
      'body',
    )
  }
}

/** SamplingParams._verify_args and _verify_greedy_sampling, with their messages. */
function checkSampling(request: ChatCompletionRequest | CompletionRequest): void {
  const n = request.n ?? 1
  const temperature = request.temperature ?? 1
  const topP = request.top_p ?? 1
  if (n < 1) throw samplingError(`n must be at least 1, got ${n}.`)
  if (n > maxSequences) {
    throw samplingError(
      `n must be at most ${maxSequences}, got ${n}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.`,
    )
  }
  const t = pythonFloat(temperature)
  if (temperature < 0)
    throw samplingError(`temperature must be non-negative, got ${t}.`, 'temperature', t)
  if (temperature > 2)
    throw samplingError(`temperature must be in [0, 2], got ${t}.`, 'temperature', t)
  if (!(topP > 0 && topP <= 1)) {
    const p = pythonFloat(topP)
    throw samplingError(`top_p must be in (0, 1], got ${p}.`, 'top_p', p)
  }
  if (n > 1 && temperature < greedyBelow)
    throw samplingError(`n must be 1 when using greedy sampling, got ${n}.`)
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
