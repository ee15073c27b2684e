import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { JsonSyntaxError, readPythonJson } from './read-python-json.ts'
import { dict, toValue, type Value } from './template-values.ts'
import { type ChatContent, VllmChatMessage, type VllmToolCall } from './vllm-chat-message.ts'

/**
 * How a chat template reads a message's content (vLLM's ChatTemplateContentFormat): as a
 * string, or as OpenAI's list of parts when the template loops over it.
 */
export type ContentFormat = 'string' | 'openai'

/** A content part as an "openai" format template sees it: text, or an image's stand-in. */
export type TemplatePart = { type: 'text'; text: string } | { type: 'image' }

/** A message as the chat template sees it, after vLLM's normalization. */
export interface TemplateMessage {
  role: string
  /** A string, or (the "openai" format) parts `{type: "text", text}` and `{type: "image"}`. */
  content: string | TemplatePart[]
  [key: string]: unknown
}

/** An image of the chat, in the order of the prompt. */
export interface ChatImage {
  /** The part's `uuid`: vLLM's identifier of the image when the client gives one. */
  uuid: string | null
}

/**
 * What the model's prompt text holds for an image before its processor expands it
 * (Gemma 3's `<start_of_image>`); null for a model that takes no images.
 */
export type ImagePlaceholder = string | null

/** The messages as the template sees them, and the images they hold. */
export interface ParsedChat {
  messages: TemplateMessage[]
  images: ChatImage[]
}

const ChatMessages = z
  .array(VllmChatMessage, { error: 'messages must be an array' })
  .min(1, { error: 'messages must not be empty' })

type Item = { text: string } | { image: ChatImage }

function refuse(message: string): KinfError {
  return new KinfError('invalid_request', message, { param: 'messages' })
}

/** A content's texts and images in order; a part whose text is null is skipped. */
function itemsOf(content: ChatContent | null | undefined): Item[] {
  if (content === null || content === undefined) return []
  if (typeof content === 'string') return [{ text: content }]
  return content.flatMap((part): Item[] => {
    switch (part.type) {
      case 'refusal':
        return part.refusal === null ? [] : [{ text: part.refusal }]
      case 'image_url':
      case 'input_image': {
        const url = part.type === 'image_url' ? part.image_url?.url : part.image_url
        const uuid = part.uuid ?? null
        if ((url === undefined || url === null) && uuid === null)
          throw refuse('An image part needs an image_url or a uuid.')
        return [{ image: { uuid } }]
      }
      default:
        return part.text === null ? [] : [{ text: part.text }]
    }
  })
}

/**
 * A "string" format content: the texts joined with "\n" (an empty one skipped, as vLLM
 * skips a falsy part), the images' placeholders in front of them (vLLM's
 * _get_full_multimodal_text_prompt, interleave_strings off): as many as the images minus
 * those the text already spells out.
 */
function joinTexts(items: Item[], placeholder: ImagePlaceholder): string {
  const text = items
    .flatMap((item) => ('text' in item && item.text !== '' ? [item.text] : []))
    .join('\n')
  const images = items.filter((item) => 'image' in item).length
  if (images === 0 || placeholder === null) return text
  const spelled = text.split(placeholder).length - 1
  if (spelled > images)
    throw refuse(
      `Found more '${placeholder}' placeholders in input prompt than actual multimodal data items.`,
    )
  const missing = Array.from({ length: images - spelled }, () => placeholder)
  return (text === '' ? missing : [...missing, text]).join('\n')
}

/**
 * vLLM's `_postprocess_messages`: the arguments of a tool call, a JSON string, replaced by
 * what json.loads reads (ints, floats and key order as Python has them); text that is not
 * JSON, or JSON that is not an object, becomes `{}` (vLLM coerces it so the conversation
 * can go on).
 */
function toolCallArguments(raw: VllmToolCall['function']['arguments']): Value {
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

function toolCalls(calls: readonly VllmToolCall[]): unknown[] {
  return calls.map((call) => ({
    ...(call.id === undefined ? {} : { id: call.id }),
    type: 'function',
    function: { name: call.function.name, arguments: toolCallArguments(call.function.arguments) },
  }))
}

function toTemplateMessage(
  message: VllmChatMessage,
  format: ContentFormat,
  placeholder: ImagePlaceholder,
  images: ChatImage[],
  index: number,
): TemplateMessage {
  const items = itemsOf(message.content)
  for (const item of items) {
    if (!('image' in item)) continue
    if (placeholder === null)
      throw refuse(
        `messages[${index}].content: this model takes no images (its tokenizer has no image placeholder)`,
      )
    images.push(item.image)
  }
  const parts = items.map(
    (item): TemplatePart =>
      'text' in item ? { type: 'text', text: item.text } : { type: 'image' },
  )
  const textOnly = parts.every((part) => part.type === 'text')
  const out: TemplateMessage = {
    role: message.role,
    content:
      format === 'string'
        ? joinTexts(items, placeholder)
        : message.role === 'tool' && textOnly
          ? parts.map((part) => (part as { text: string }).text).join('\n')
          : parts,
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
 * missing content is "") with the images' placeholders before them, in the "openai"
 * format they stay parts (a missing content is []) and an image is `{type: "image"}`, a
 * tool message's text parts are always joined; an assistant's empty `tool_calls` are
 * dropped and their arguments parsed; `reasoning` (or the older `reasoning_content`) is
 * given under both names; a developer message carries its `tools`. An image needs a
 * model whose prompt has a placeholder for it. Throws KinfError invalid_request naming
 * the first bad field.
 */
export function parseChatMessages(
  messages: unknown,
  format: ContentFormat,
  placeholder: ImagePlaceholder = null,
): ParsedChat {
  const parsed = ChatMessages.safeParse(messages)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const detail = issue === undefined ? 'invalid messages' : describeIssue(issue)
    throw new KinfError('invalid_request', detail, { cause: parsed.error })
  }
  const images: ChatImage[] = []
  const normalized = parsed.data.map((message, index) =>
    toTemplateMessage(message, format, placeholder, images, index),
  )
  return { messages: normalized, images }
}
