import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type ChatContent, ChatMessage, type ChatToolCall } from './chat-message.ts'
import { JsonSyntaxError, readPythonJson } from './read-python-json.ts'
import { dict, toValue, type Value } from './template-values.ts'

/**
 * How a chat template reads a message's content (vLLM's ChatTemplateContentFormat): as a
 * string, or as OpenAI's list of parts when the template loops over it.
 */
export type ContentFormat = 'string' | 'openai'

/** A message as the chat template sees it, after vLLM's normalization. */
export interface TemplateMessage {
  role: string
  /** A string, or (the "openai" format) text parts `{type: "text", text}`. */
  content: string | { type: 'text'; text: string }[]
  [key: string]: unknown
}

const ChatMessages = z
  .array(ChatMessage, { error: 'messages must be an array' })
  .min(1, { error: 'messages must not be empty' })

function texts(content: ChatContent | null | undefined): string[] {
  if (content === null || content === undefined) return []
  if (typeof content === 'string') return [content]
  return content.flatMap((part) => {
    const text = part.type === 'refusal' ? part.refusal : part.text
    return text === null ? [] : [text]
  })
}

/**
 * vLLM's `_postprocess_messages`: the arguments of a tool call, a JSON string, replaced by
 * what json.loads reads (ints, floats and key order as Python has them); text that is not
 * JSON, or JSON that is not an object, becomes `{}` (vLLM coerces it so the conversation
 * can go on).
 */
function toolCallArguments(raw: ChatToolCall['function']['arguments']): Value {
  if (raw === null || raw === undefined || raw === '') return dict(new Map())
  if (typeof raw !== 'string') return toValue(raw)
  try {
    const value = readPythonJson(raw)
    return value.type === 'ObjectValue' ? value : dict(new Map())
  } catch (error) {
    if (error instanceof JsonSyntaxError) return dict(new Map())
    throw error
  }
}

function toolCalls(calls: readonly ChatToolCall[]): unknown[] {
  return calls.map((call) => ({
    ...(call.id === undefined ? {} : { id: call.id }),
    type: 'function',
    function: { name: call.function.name, arguments: toolCallArguments(call.function.arguments) },
  }))
}

function toTemplateMessage(message: ChatMessage, format: ContentFormat): TemplateMessage {
  const parts = texts(message.content)
  const joined = message.role === 'tool' || format === 'string'
  const out: TemplateMessage = {
    role: message.role,
    content: joined ? parts.join('\n') : parts.map((text) => ({ type: 'text', text })),
  }
  const reasoning = message.reasoning ?? message.reasoning_content
  if (message.role === 'assistant') {
    if (message.tool_calls != null && message.tool_calls.length > 0)
      out.tool_calls = toolCalls(message.tool_calls)
    if (reasoning != null) {
      out.reasoning = reasoning
      out.reasoning_content = reasoning
    }
  }
  if (message.role === 'tool' && message.tool_call_id !== undefined)
    out.tool_call_id = message.tool_call_id
  if (message.name !== undefined) out.name = message.name
  if (message.role === 'developer') out.tools = message.tools ?? null
  return out
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${String(key)}`,
    )
    .join('')
  return `messages${path.startsWith('[') || path === '' ? '' : '.'}${path}: ${issue.message}`
}

/**
 * Validates chat messages and normalizes them as vLLM does before rendering the chat
 * template (vllm/renderers/chat_utils: parse_chat_message_content.py and
 * parse_chat_message.py): in the "string" format text parts are joined with "\n" (a
 * missing content is ""), in the "openai" format they stay parts (a missing content is
 * []), a tool message's text parts are always joined; an assistant's empty `tool_calls`
 * are dropped and their arguments parsed; `reasoning` (or the older `reasoning_content`)
 * is given under both names; a developer message carries its `tools`. Throws KinfError
 * invalid_request naming the first bad field.
 */
export function parseChatMessages(messages: unknown, format: ContentFormat): TemplateMessage[] {
  const parsed = ChatMessages.safeParse(messages)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const detail = issue === undefined ? 'invalid messages' : describeIssue(issue)
    throw new KinfError('invalid_request', detail, { cause: parsed.error })
  }
  return parsed.data.map((message) => toTemplateMessage(message, format))
}
