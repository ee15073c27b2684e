import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { type ChatContent, ChatMessage } from './chat-message.ts'
import { formatToolArguments } from './format-tool-arguments.ts'

/** A message as the chat template sees it, after vLLM's normalization. */
export interface TemplateMessage {
  role: ChatMessage['role']
  content: string
  name?: string
  tool_calls?: TemplateToolCall[]
  tool_call_id?: string
  reasoning?: string
  reasoning_content?: string
}

export interface TemplateToolCall {
  id?: string
  type: 'function'
  /** `arguments` holds the text the template prints (see `formatToolArguments`). */
  function: { name: string; arguments: string }
}

const ChatMessages = z
  .array(ChatMessage, { error: 'messages must be an array' })
  .min(1, { error: 'messages must not be empty' })

function toText(content: ChatContent | null | undefined): string {
  if (content === null || content === undefined) return ''
  return typeof content === 'string' ? content : content.map((part) => part.text).join('\n')
}

function toTemplateMessage(message: ChatMessage): TemplateMessage {
  const out: TemplateMessage = { role: message.role, content: toText(message.content) }
  if (message.name !== undefined) out.name = message.name
  if (message.role === 'tool' && message.tool_call_id !== undefined) {
    out.tool_call_id = message.tool_call_id
  }
  if (message.role === 'assistant') {
    if (message.tool_calls != null && message.tool_calls.length > 0) {
      out.tool_calls = message.tool_calls.map((call) => ({
        ...(call.id === undefined ? {} : { id: call.id }),
        type: 'function',
        function: {
          name: call.function.name,
          arguments: formatToolArguments(call.function.arguments),
        },
      }))
    }
    if (message.reasoning != null) {
      out.reasoning = message.reasoning
      out.reasoning_content = message.reasoning
    }
  }
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
 * template (`parse_chat_messages` with the "string" content format, which Qwen3's
 * template needs): text parts joined with "\n", a missing assistant content as "",
 * empty `tool_calls` dropped, tool-call arguments parsed as JSON, `reasoning` copied to
 * `reasoning_content`. Throws `KinfError` `invalid_request` naming the first bad field.
 */
export function parseChatMessages(messages: unknown): TemplateMessage[] {
  const parsed = ChatMessages.safeParse(messages)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const detail = issue === undefined ? 'invalid messages' : describeIssue(issue)
    throw new KinfError('invalid_request', detail, { cause: parsed.error })
  }
  return parsed.data.map(toTemplateMessage)
}
