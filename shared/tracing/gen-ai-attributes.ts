import type { Attributes } from '@opentelemetry/api'

/**
 * OpenTelemetry's GenAI semantic conventions, the attributes Kinference sets (the names are
 * the specification's; the SDK's incubating constants may be renamed, so they are not
 * imported). A span of an inference call is named `${operation} ${model}`.
 */
export const genAi = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestStream: 'gen_ai.request.stream',
  requestChoiceCount: 'gen_ai.request.choice.count',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  /** Seconds from the request to its first streamed chunk. */
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  conversationId: 'gen_ai.conversation.id',
} as const

/** gen_ai.operation.name of OpenAI's endpoints (/v1/embeddings is `embeddings`). */
export type GenAiOperation = 'chat' | 'text_completion' | 'embeddings'

/** gen_ai.provider.name values (the specification's well-known ones where they exist). */
export const genAiProviders = { bedrock: 'aws.bedrock', vllm: 'vllm' } as const

/** What a request asked for, as the GenAI conventions name it. */
export function genAiRequestAttributes(request: {
  operation: GenAiOperation
  model: string
  maxTokens?: number | null
  stream?: boolean
  choices?: number
}): Attributes {
  return {
    [genAi.operationName]: request.operation,
    [genAi.requestModel]: request.model,
    ...(request.maxTokens == null ? {} : { [genAi.requestMaxTokens]: request.maxTokens }),
    ...(request.stream === undefined ? {} : { [genAi.requestStream]: request.stream }),
    ...(request.choices === undefined || request.choices === 1
      ? {}
      : { [genAi.requestChoiceCount]: request.choices }),
  }
}

/** The tokens an answer used, as the GenAI conventions name them. */
export function genAiUsageAttributes(usage: {
  inputTokens: number
  outputTokens: number
  cachedInputTokens?: number | null
}): Attributes {
  return {
    [genAi.inputTokens]: usage.inputTokens,
    [genAi.outputTokens]: usage.outputTokens,
    ...(usage.cachedInputTokens == null
      ? {}
      : { [genAi.cacheReadInputTokens]: usage.cachedInputTokens }),
  }
}
