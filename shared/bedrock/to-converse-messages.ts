import { z } from 'zod'
import { KinfError } from '../errors/kinf-error.ts'
import type { ChatMessage } from '../openai/chat-completion-request.ts'
import type {
  ConverseContentBlock,
  ConverseImageFormat,
  ConverseMessage,
  ConverseSystemBlock,
  JsonValue,
} from './converse-request.ts'

const ToolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
})

const ImagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string(), detail: z.string().optional() }),
})

const imageFormats: Record<string, ConverseImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
}

const dataUrl = /^data:([^;,]+);base64,([A-Za-z0-9+/\s]*={0,2})$/

function invalid(message: string): KinfError {
  return new KinfError('invalid_request', message)
}

/** The text of a system, developer or tool message: a string, or text parts joined. */
function plainText(message: ChatMessage, where: string): string {
  const { content } = message
  if (content === undefined || content === null) return ''
  if (typeof content === 'string') return content
  return content
    .map((part, i) => {
      if (part.type !== 'text' || part.text === undefined) {
        throw invalid(`${where}.content[${i}]: a ${message.role} message takes text parts only`)
      }
      return part.text
    })
    .join('')
}

function imageBlock(part: unknown, where: string): ConverseContentBlock {
  const parsed = ImagePart.safeParse(part)
  if (!parsed.success) throw invalid(`${where}: an image_url part needs image_url.url`)
  const match = dataUrl.exec(parsed.data.image_url.url)
  if (!match) {
    throw invalid(
      `${where}: this backend (Bedrock) takes images only as base64 data: URLs; remote image URLs are not fetched`,
    )
  }
  const format = imageFormats[(match[1] ?? '').toLowerCase()]
  if (!format) {
    throw invalid(`${where}: image type ${match[1]} is not supported (png, jpeg, gif, webp)`)
  }
  const bytes = (match[2] ?? '').replace(/\s/g, '')
  if (bytes.length === 0 || bytes.length % 4 !== 0) {
    throw invalid(`${where}: the image's base64 data is malformed`)
  }
  return { image: { format, source: { bytes } } }
}

/** Bedrock refuses blank text blocks, so empty text is left out. */
function userBlocks(message: ChatMessage, where: string): ConverseContentBlock[] {
  const { content } = message
  if (content === undefined || content === null) return []
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }]
  return content.flatMap((part, i): ConverseContentBlock[] => {
    if (part.type === 'text') return part.text ? [{ text: part.text }] : []
    if (part.type === 'image_url') return [imageBlock(part, `${where}.content[${i}]`)]
    throw invalid(`${where}.content[${i}]: ${part.type} parts are not supported on this backend`)
  })
}

function toolUseBlocks(message: ChatMessage, where: string): ConverseContentBlock[] {
  return (message.tool_calls ?? []).map((raw, i) => {
    const path = `${where}.tool_calls[${i}]`
    const call = ToolCall.safeParse(raw)
    if (!call.success) {
      throw invalid(`${path}: a tool call needs id, function.name and function.arguments`)
    }
    const { arguments: text, name } = call.data.function
    let input: JsonValue
    try {
      input = text.trim() === '' ? {} : (JSON.parse(text) as JsonValue)
    } catch (error) {
      throw invalid(`${path}.function.arguments is not valid JSON (${(error as Error).message})`)
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw invalid(`${path}.function.arguments must be a JSON object`)
    }
    return { toolUse: { toolUseId: call.data.id, name, input } }
  })
}

function toolResultBlock(message: ChatMessage, where: string): ConverseContentBlock {
  if (!message.tool_call_id) throw invalid(`${where}: a tool message needs tool_call_id`)
  const text = plainText(message, where)
  return {
    toolResult: {
      toolUseId: message.tool_call_id,
      // Bedrock refuses a blank text block; an empty result is an empty JSON object.
      content: text === '' ? [{ json: {} }] : [{ text }],
    },
  }
}

/**
 * OpenAI messages as Converse's system blocks and messages: system and developer messages
 * go to `system`; a tool message becomes a user message with a toolResult; consecutive
 * messages of one role merge, because Bedrock requires the roles to alternate.
 */
export function toConverseMessages(messages: readonly ChatMessage[]): {
  system: ConverseSystemBlock[]
  messages: ConverseMessage[]
} {
  const system: ConverseSystemBlock[] = []
  const out: ConverseMessage[] = []
  messages.forEach((message, i) => {
    const where = `messages[${i}]`
    let role: ConverseMessage['role']
    let content: ConverseContentBlock[]
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = plainText(message, where)
        if (text !== '') system.push({ text })
        return
      }
      case 'user':
        role = 'user'
        content = userBlocks(message, where)
        break
      case 'assistant':
        role = 'assistant'
        content = [...userBlocks(message, where), ...toolUseBlocks(message, where)]
        break
      case 'tool':
        role = 'user'
        content = [toolResultBlock(message, where)]
        break
    }
    if (content.length === 0) {
      throw invalid(
        `${where}: a ${message.role} message with no content (Bedrock refuses blank messages)`,
      )
    }
    const previous = out.at(-1)
    if (previous?.role === role) previous.content.push(...content)
    else out.push({ role, content })
  })
  if (out.length === 0) throw invalid('messages: at least one user message is required')
  return { system, messages: out }
}
