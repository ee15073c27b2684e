import type { ChatMessage } from '../chat-completion-request.ts'
import { isRecord } from '../choice-builder.ts'
import type { ResponsesRequest } from './responses-request.ts'

/** What a response is made with besides the chat answer: its ids, time and request. */
export interface ResponseFrame {
  id: string
  createdAt: number
  request: ResponsesRequest
  /** A fresh id for an output item, given its kind's prefix (msg, fc). */
  newItemId: (prefix: string) => string
}

/** One output item of a response, as the Responses API writes it. */
export type OutputItem =
  | {
      type: 'message'
      id: string
      status: 'completed' | 'incomplete'
      role: 'assistant'
      content: { type: 'output_text'; text: string; annotations: []; logprobs: [] }[]
    }
  | {
      type: 'function_call'
      id: string
      call_id: string
      name: string
      arguments: string
      status: 'completed'
    }

/** A chat answer's usage in the Responses API's names, cached tokens always counted. */
export function responseUsage(usage: unknown): Record<string, unknown> | null {
  if (!isRecord(usage)) return null
  const input = Number(usage.prompt_tokens ?? 0)
  const output = Number(usage.completion_tokens ?? 0)
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {}
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: Number(details.cached_tokens ?? 0) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: Number(usage.total_tokens ?? input + output),
  }
}

/** The output items of a chat answer's first choice: its text, then its tool calls. */
export function outputItems(message: unknown, finish: unknown, frame: ResponseFrame): OutputItem[] {
  const items: OutputItem[] = []
  if (!isRecord(message)) return items
  const text = typeof message.content === 'string' ? message.content : ''
  if (text !== '' || !Array.isArray(message.tool_calls) || message.tool_calls.length === 0)
    items.push({
      type: 'message',
      id: frame.newItemId('msg'),
      status: finish === 'length' ? 'incomplete' : 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    })
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isRecord(call) || !isRecord(call.function)) continue
    items.push({
      type: 'function_call',
      id: frame.newItemId('fc'),
      call_id: String(call.id ?? frame.newItemId('call')),
      name: String(call.function.name ?? ''),
      arguments: String(call.function.arguments ?? ''),
      status: 'completed',
    })
  }
  return items
}

/** A Responses API response object, at a status, with the output and usage known so far. */
export function responseObject(
  frame: ResponseFrame,
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed',
  output: readonly OutputItem[],
  usage: Record<string, unknown> | null,
  model: string,
): Record<string, unknown> {
  const { request } = frame
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    metadata: request.metadata ?? {},
    model,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    store: request.store !== false,
    temperature: request.temperature ?? null,
    text: { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? null,
    truncation: 'disabled',
    usage,
    user: request.user ?? null,
  }
}

/** The finished chat answer (JSON) as a response, and the assistant message to store. */
export function responseFromChat(
  chat: Record<string, unknown>,
  frame: ResponseFrame,
): { response: Record<string, unknown>; assistant: ChatMessage } {
  const choice = Array.isArray(chat.choices) && isRecord(chat.choices[0]) ? chat.choices[0] : {}
  const message = isRecord(choice.message) ? choice.message : {}
  const output = outputItems(message, choice.finish_reason, frame)
  const status = choice.finish_reason === 'length' ? 'incomplete' : 'completed'
  const model = typeof chat.model === 'string' ? chat.model : frame.request.model
  return {
    response: responseObject(frame, status, output, responseUsage(chat.usage), model),
    assistant: {
      role: 'assistant',
      content: typeof message.content === 'string' ? message.content : null,
      ...(Array.isArray(message.tool_calls) &&
        message.tool_calls.length > 0 && { tool_calls: message.tool_calls }),
    },
  }
}
