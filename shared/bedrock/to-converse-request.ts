import { KinfError } from '../errors/kinf-error.ts'
import type { ChatCompletionRequest } from '../openai/chat-completion-request.ts'
import { maxTokensField, maxTokensOf } from '../openai/openai-request.ts'
import type {
  ConverseInferenceConfig,
  ConverseRequest,
  ConverseToolConfig,
  JsonValue,
} from './converse-request.ts'
import { toConverseMessages } from './to-converse-messages.ts'

/** The provider model a request goes to (from the InferenceProvider's ProviderModel). */
export interface ConverseModel {
  modelId: string
  /** Cap on the answer's length; also the default when the client sets none. */
  maxOutputTokens?: number
}

/** Fields with no Converse equivalent: refused rather than silently ignored. */
const unsupported: { field: string; present: (value: unknown) => boolean; why: string }[] = [
  { field: 'n', present: (v) => typeof v === 'number' && v > 1, why: 'Bedrock returns one choice' },
  { field: 'logprobs', present: (v) => v === true, why: 'Bedrock returns no log probabilities' },
  {
    field: 'top_logprobs',
    present: (v) => typeof v === 'number' && v > 0,
    why: 'Bedrock returns no log probabilities',
  },
  { field: 'seed', present: (v) => v !== undefined && v !== null, why: 'Bedrock takes no seed' },
  {
    field: 'response_format',
    present: (v) =>
      typeof v === 'object' && v !== null && (v as { type?: unknown }).type !== 'text',
    why: 'JSON modes are not mapped; describe the format in the prompt or use a tool',
  },
  {
    field: 'presence_penalty',
    present: (v) => typeof v === 'number' && v !== 0,
    why: 'Converse has no penalties',
  },
  {
    field: 'frequency_penalty',
    present: (v) => typeof v === 'number' && v !== 0,
    why: 'Converse has no penalties',
  },
  {
    field: 'logit_bias',
    present: (v) => typeof v === 'object' && v !== null && Object.keys(v).length > 0,
    why: 'Converse has no logit bias',
  },
  { field: 'functions', present: (v) => v != null, why: 'use tools instead' },
  { field: 'function_call', present: (v) => v != null, why: 'use tool_choice instead' },
  { field: 'audio', present: (v) => v != null, why: 'no audio output' },
  { field: 'prediction', present: (v) => v != null, why: 'no predicted outputs' },
  { field: 'ignore_eos', present: (v) => v === true, why: 'a vLLM option' },
  {
    field: 'min_tokens',
    present: (v) => typeof v === 'number' && v > 0,
    why: 'a vLLM option',
  },
]

function invalid(message: string): KinfError {
  return new KinfError('invalid_request', message)
}

/** The client's limit (as the pods read it), capped by the provider model's. */
function outputLimitOf(request: ChatCompletionRequest, model: ConverseModel): number | undefined {
  const openAi = { kind: 'chat', body: request } as const
  const asked = maxTokensOf(openAi)
  if (asked !== null && asked < 1) throw invalid(`${maxTokensField(openAi)} must be at least 1`)
  if (asked === null) return model.maxOutputTokens
  return model.maxOutputTokens === undefined ? asked : Math.min(asked, model.maxOutputTokens)
}

function inferenceConfigOf(
  request: ChatCompletionRequest,
  model: ConverseModel,
): ConverseInferenceConfig {
  const config: ConverseInferenceConfig = {}
  const maxTokens = outputLimitOf(request, model)
  if (maxTokens !== undefined) config.maxTokens = maxTokens
  if (request.temperature != null) config.temperature = request.temperature
  if (request.top_p != null) config.topP = request.top_p
  if (request.stop != null) {
    const stop = typeof request.stop === 'string' ? [request.stop] : request.stop
    if (stop.some((s) => s === '')) throw invalid('stop: stop sequences must not be empty')
    if (stop.length > 0) config.stopSequences = stop
  }
  return config
}

function toolConfigOf(request: ChatCompletionRequest): ConverseToolConfig | undefined {
  // Their shapes were checked with the request (FunctionTool, ToolChoice).
  const list = request.tools ?? []
  const chosen = request.tool_choice ?? undefined
  if (list.length === 0) {
    if (chosen === 'required' || typeof chosen === 'object') {
      throw invalid('tool_choice asks for a tool but no tools were given')
    }
    return undefined
  }
  // Converse has no "none": without toolConfig the model cannot call a tool (Envoy does this).
  if (chosen === 'none') return undefined
  const config: ConverseToolConfig = {
    tools: list.map(({ function: f }) => ({
      toolSpec: {
        name: f.name,
        ...(f.description == null ? {} : { description: f.description }),
        inputSchema: { json: (f.parameters ?? { type: 'object', properties: {} }) as JsonValue },
      },
    })),
  }
  if (chosen === 'auto') config.toolChoice = { auto: {} }
  else if (chosen === 'required') config.toolChoice = { any: {} }
  else if (typeof chosen === 'object') {
    const { name } = chosen.function
    if (!list.some((t) => t.function.name === name)) {
      throw invalid(`tool_choice names ${name}, which is not among the tools`)
    }
    config.toolChoice = { tool: { name } }
  }
  return config
}

/**
 * An OpenAI chat request as a Converse request for `model`. Throws KinfError
 * invalid_request, naming the field, for what Bedrock cannot do or the request got wrong.
 */
export function toConverseRequest(
  request: ChatCompletionRequest,
  model: ConverseModel,
): ConverseRequest {
  const fields = request as Record<string, unknown>
  for (const { field, present, why } of unsupported) {
    if (present(fields[field])) {
      throw invalid(`${field} is not supported on this backend (Bedrock): ${why}`)
    }
  }
  const { system, messages } = toConverseMessages(request.messages)
  const converse: ConverseRequest = { messages }
  if (system.length > 0) converse.system = system
  const inferenceConfig = inferenceConfigOf(request, model)
  if (Object.keys(inferenceConfig).length > 0) converse.inferenceConfig = inferenceConfig
  const toolConfig = toolConfigOf(request)
  if (toolConfig) converse.toolConfig = toolConfig
  return converse
}
