import { z } from 'zod'
import { KinfError } from '../../errors/kinf-error.ts'
import type { ChatMessage } from '../chat-completion-request.ts'

/** A text part of a Responses input message. */
const InputText = z.looseObject({
  type: z.enum(['input_text', 'output_text']),
  text: z.string(),
})

const InputMessage = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
})

const FunctionCall = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
})

const FunctionCallOutput = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.string(),
})

const InputItem = z.union([FunctionCall, FunctionCallOutput, InputMessage])

/** A function tool as the Responses API declares it: flat, not under `function`. */
const ResponsesTool = z.looseObject({
  type: z.string(),
  name: z.string().min(1).optional(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
})

/**
 * The fields of POST /v1/responses Kinference serves. Built-in tools (web search, file
 * search, computer use), background mode, and conversations are refused with a 400 by
 * name rather than ignored.
 */
export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItem)]),
  instructions: z.string().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  max_output_tokens: z.int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  tools: z.array(ResponsesTool).nullish(),
  tool_choice: z.unknown().optional(),
  parallel_tool_calls: z.boolean().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  user: z.string().nullish(),
  background: z.boolean().nullish(),
  conversation: z.unknown().optional(),
})
export type ResponsesRequest = z.infer<typeof ResponsesRequest>

/** A stored conversation a later request continues with previous_response_id. */
export interface StoredConversation {
  /** The chat messages so far, the last answer's included; instructions are not kept. */
  messages: ChatMessage[]
  model: string
}

function invalid(message: string, param: string | null): KinfError {
  return new KinfError('invalid_request', message, { param })
}

/** Reads a Responses request body; a 400 naming the first field at fault otherwise. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const parsed = ResponsesRequest.safeParse(body)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const param = issue?.path.map(String).join('.') || null
    throw invalid(`${param ?? 'body'}: ${issue?.message ?? 'invalid request'}`, param)
  }
  const request = parsed.data
  if (request.background === true)
    throw invalid('background responses are not supported', 'background')
  if (request.conversation !== undefined)
    throw invalid('conversations are not supported: use previous_response_id', 'conversation')
  for (const [index, tool] of (request.tools ?? []).entries())
    if (tool.type !== 'function' || tool.name === undefined)
      throw invalid(
        `tools[${index}]: only function tools are supported, not "${tool.type}"`,
        `tools.${index}`,
      )
  return request
}

/** A message's text: a string, or its text parts joined (other parts are refused). */
function textOf(content: z.infer<typeof InputMessage>['content'], at: string): string {
  if (typeof content === 'string') return content
  return content
    .map((part, index) => {
      const text = InputText.safeParse(part)
      if (!text.success)
        throw invalid(`${at}.content[${index}]: "${part.type}" parts are not supported`, at)
      return text.data.text
    })
    .join('')
}

/** The request's input as chat messages, function calls and their outputs included. */
export function inputMessages(input: ResponsesRequest['input']): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const messages: ChatMessage[] = []
  for (const [index, item] of input.entries()) {
    if ('call_id' in item && item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      }
      const last = messages.at(-1)
      // Parallel calls of one turn are one assistant message with several tool calls.
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls) && !last.content)
        last.tool_calls.push(call)
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] })
    } else if ('call_id' in item && item.type === 'function_call_output')
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output })
    else if ('role' in item) {
      const role = item.role === 'developer' ? 'system' : item.role
      messages.push({ role, content: textOf(item.content, `input[${index}]`) })
    }
  }
  return messages
}

/**
 * The chat completions body the pipeline serves a Responses request as: the instructions
 * as the system message, the stored conversation's messages, then this input; function
 * tools in chat's shape; the usage always asked for (it becomes the response's usage).
 */
export function chatBodyOf(
  request: ResponsesRequest,
  previous: StoredConversation | null,
  input: readonly ChatMessage[],
): Record<string, unknown> {
  const messages: ChatMessage[] = [
    ...(request.instructions ? [{ role: 'system' as const, content: request.instructions }] : []),
    ...(previous?.messages ?? []),
    ...input,
  ]
  const tools = request.tools?.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description != null && { description: tool.description }),
      ...(tool.parameters != null && { parameters: tool.parameters }),
      ...(tool.strict != null && { strict: tool.strict }),
    },
  }))
  const toolChoice = request.tool_choice
  return {
    model: request.model,
    messages,
    ...(request.stream === true && { stream: true, stream_options: { include_usage: true } }),
    ...(request.max_output_tokens != null && { max_tokens: request.max_output_tokens }),
    ...(request.temperature != null && { temperature: request.temperature }),
    ...(request.top_p != null && { top_p: request.top_p }),
    ...(tools && tools.length > 0 && { tools }),
    ...(toolChoice !== undefined && { tool_choice: chatToolChoice(toolChoice) }),
    ...(request.parallel_tool_calls != null && {
      parallel_tool_calls: request.parallel_tool_calls,
    }),
    ...(request.user != null && { user: request.user }),
  }
}

/** Responses' `{type: 'function', name}` tool choice is chat's `{type, function: {name}}`. */
function chatToolChoice(choice: unknown): unknown {
  if (typeof choice === 'object' && choice !== null && 'name' in choice)
    return { type: 'function', function: { name: (choice as { name: unknown }).name } }
  return choice
}
