import { KinfError } from '../errors/kinf-error.ts'
import type { ChatCompletionRequest } from '../openai/chat-completion-request.ts'
import { maxTokensField, maxTokensOf } from '../openai/openai-request.ts'
import { converseUnhonoured, withoutFields } from './converse-capabilities.ts'
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
 * An OpenAI chat request as a Converse request for `model`, without the fields
 * `options.drop` names (a burst action's dropFields). Throws KinfError invalid_request,
 * naming the field, for what Bedrock cannot do (converse-capabilities.ts) or the request
 * got wrong.
 */
export function toConverseRequest(
  asked: ChatCompletionRequest,
  model: ConverseModel,
  options: { drop?: readonly string[] } = {},
): ConverseRequest {
  const request = withoutFields(asked, options.drop ?? [])
  const [first] = converseUnhonoured(request)
  if (first !== undefined)
    throw new KinfError(
      'invalid_request',
      `${first.field} is not supported on this backend (Bedrock): ${first.why}`,
      { param: first.field, openAiCode: 'unsupported_parameter' },
    )
  const { system, messages } = toConverseMessages(request.messages)
  const converse: ConverseRequest = { messages }
  if (system.length > 0) converse.system = system
  const inferenceConfig = inferenceConfigOf(request, model)
  if (Object.keys(inferenceConfig).length > 0) converse.inferenceConfig = inferenceConfig
  const toolConfig = toolConfigOf(request)
  if (toolConfig) converse.toolConfig = toolConfig
  return converse
}
