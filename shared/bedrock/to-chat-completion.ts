import type { ChatCompletion, ChatToolCall, ChatUsage, FinishReason } from './chat-completion.ts'
import type { ConverseResponse, ConverseUsage } from './converse-response.ts'

/** Who the reply is for: Bedrock returns neither an id nor a model name. */
export interface ChatReplyIdentity {
  /** `chatcmpl-...`, built from Bedrock's x-amzn-requestid. */
  id: string
  /** The model name the client asked for (an alias stays an alias). */
  model: string
  /** Unix seconds. */
  created: number
}

const finishReasons: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filtered: 'content_filter',
  // Envoy says stop; the client should learn that a guardrail, not the model, ended it.
  guardrail_intervened: 'content_filter',
  // The prompt plus the answer filled the window: the answer was cut, as with max_tokens.
  model_context_window_exceeded: 'length',
  // The model produced something unusable; OpenAI has no reason for that. The caller logs it.
  malformed_model_output: 'stop',
  malformed_tool_use: 'stop',
}

/** OpenAI's finish_reason for a Converse stopReason; an unknown (future) reason reads as stop. */
export function finishReasonOf(stopReason: string): FinishReason {
  return finishReasons[stopReason] ?? 'stop'
}

/** Stop reasons that mean the model misbehaved: answered as `stop`, but worth a log line. */
export function isMalformedStop(stopReason: string): boolean {
  return stopReason.startsWith('malformed_') || !(stopReason in finishReasons)
}

/** Cached input counts as prompt: prompt_tokens = input + cache read + cache write (Portkey, Envoy). */
export function chatUsageOf(usage: ConverseUsage): ChatUsage {
  const cacheRead = usage.cacheReadInputTokens ?? 0
  const promptTokens = usage.inputTokens + cacheRead + (usage.cacheWriteInputTokens ?? 0)
  return {
    prompt_tokens: promptTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: promptTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: cacheRead },
  }
}

/** A Converse reply as an OpenAI chat.completion. */
export function toChatCompletion(
  response: ConverseResponse,
  identity: ChatReplyIdentity,
): ChatCompletion {
  const text: string[] = []
  const reasoning: string[] = []
  const toolCalls: ChatToolCall[] = []
  for (const block of response.output.message.content) {
    if (block.text !== undefined) text.push(block.text)
    const thought = block.reasoningContent?.reasoningText?.text
    if (thought !== undefined) reasoning.push(thought)
    if (block.toolUse) {
      toolCalls.push({
        id: block.toolUse.toolUseId,
        type: 'function',
        function: {
          name: block.toolUse.name,
          arguments: JSON.stringify(block.toolUse.input ?? {}),
        },
      })
    }
  }
  const message: ChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    // OpenAI answers a pure tool call with content null.
    content: text.length === 0 && toolCalls.length > 0 ? null : text.join(''),
  }
  if (toolCalls.length > 0) message.tool_calls = toolCalls
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('')
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [
      { index: 0, message, logprobs: null, finish_reason: finishReasonOf(response.stopReason) },
    ],
    usage: chatUsageOf(response.usage),
  }
}
