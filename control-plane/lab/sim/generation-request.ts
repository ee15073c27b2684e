import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../../shared/openai/chat-completion-request.ts'
import {
  maxTokensOf,
  parseOpenAiRequest,
  type RequestKind,
} from '../../../shared/openai/openai-request.ts'
import type { SimModel } from './model/create-sim-model.ts'
import type { ImageFeature } from './model/image-tokens.ts'
import { fromJavaScript, isPyDict, type PyDict, parsePythonJson } from './model/python-json.ts'
import type { ChatRequestInput } from './model/render-chat-prompt.ts'
import { jsonTextOf } from './read-json-body.ts'
import { badRequest, pythonFloat, samplingError, VllmError, validationError } from './vllm-error.ts'

/** A generation request after vLLM's checks: token ids in, limits and stream options. */
export interface GenerationRequest {
  kind: RequestKind
  promptTokenIds: number[]
  /** Each image's placeholder range and identity, for the engine's block hashes. */
  multimodal: ImageFeature[]
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
  model: SimModel,
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
  const { tokenIds: promptTokenIds, multimodal } = promptOf(kind, body, model)
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
    multimodal,
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
  if (
    'continue_final_message' in request &&
    request.continue_final_message &&
    request.add_generation_prompt
  ) {
    throw validationError(
      [
        {
          loc: [],
          msg: 'Value error, Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
        },
      ],
      'body',
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

/** The prompt a vLLM pod runs for a request; its own tokenizer and chat template make it. */
export interface PromptOf {
  tokenIds: number[]
  multimodal: ImageFeature[]
}

/**
 * A chat request rendered and tokenized as vLLM's chat path does (add_special_tokens
 * false unless asked), a completion's prompt tokenized with special tokens unless told
 * otherwise, or its ids as given. The body is read again as Python reads it, so what the
 * template prints (tool schemas, arguments) is what vLLM prints. A request vLLM refuses
 * is its 400.
 */
export function promptOf(kind: RequestKind, body: unknown, model: SimModel): PromptOf {
  const text = jsonTextOf(body)
  const python = text === null ? fromJavaScript(body) : parsePythonJson(text)
  if (!isPyDict(python)) throw badRequest('The body must be a JSON object.')
  try {
    if (kind === 'chat') {
      const prompt = model.renderChat(chatInputOf(python))
      return { tokenIds: prompt.tokenIds, multimodal: prompt.multimodal }
    }
    return { tokenIds: completionIds(python, model), multimodal: [] }
  } catch (error) {
    if (!KinfError.isInstance(error) || error instanceof VllmError) throw error
    throw badRequest(error.message, error.param ?? (kind === 'chat' ? 'messages' : 'prompt'))
  }
}

/** The fields of a chat body vLLM's renderer reads, with the request model's defaults. */
function chatInputOf(body: PyDict): ChatRequestInput {
  const kwargs = body.get('chat_template_kwargs')
  const template =
    body.get('chat_template') ?? (isPyDict(kwargs) ? kwargs.get('chat_template') : null)
  if (template !== null && template !== undefined)
    throw badRequest(
      'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.',
    )
  const tools = body.get('tools')
  const flag = (name: string, fallback: boolean) => {
    const value = body.get(name)
    return typeof value === 'boolean' ? value : fallback
  }
  return {
    messages: (body.get('messages') as PyDict[]) ?? [],
    tools: Array.isArray(tools) ? tools : null,
    documents: body.get('documents') ?? null,
    addGenerationPrompt: flag('add_generation_prompt', true),
    continueFinalMessage: flag('continue_final_message', false),
    chatTemplateKwargs: isPyDict(kwargs) ? kwargs : null,
    reasoningEffort: body.get('reasoning_effort') ?? null,
    addSpecialTokens: flag('add_special_tokens', false),
  }
}

function completionIds(body: PyDict, model: SimModel): number[] {
  const prompt = body.get('prompt')
  const special = body.get('add_special_tokens')
  if (typeof prompt === 'string')
    return model.encode(prompt, { addSpecialTokens: typeof special === 'boolean' ? special : true })
  const ids = (Array.isArray(prompt) ? prompt : []).map(Number)
  const outside = ids.find((id) => id >= model.vocabSize)
  if (outside !== undefined) throw badRequest(`Token id ${outside} is out of vocabulary`, 'prompt')
  return ids
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
