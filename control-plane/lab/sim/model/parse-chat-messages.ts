import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import type { ContentFormat } from './detect-content-format.ts'
import { isPyDict, type PyDict, type PyValue, parsePythonJson } from './python-json.ts'

/** An image of the request, in order of appearance. */
export interface ImageItem {
  /** The URL (an http URL or a data: URL) the client gave; null with a uuid only. */
  url: string | null
  /** The client's own identifier for the image (vLLM's `uuid` field of a part). */
  uuid: string | null
}

export interface ParsedChat {
  /** The messages as vLLM hands them to the template (ConversationMessage dicts). */
  conversation: PyDict[]
  images: ImageItem[]
}

/** What the model takes besides text; null placeholder: a text-only model. */
export interface MediaSupport {
  /** The text that stands for an image in a "string" content format prompt (get_placeholder_str). */
  imagePlaceholder: string | null
}

const refuse = (message: string, param: string | null = 'messages') =>
  new KinfError('invalid_request', message, { param })

/** vLLM's MM_PARSER_MAP keys and the parts it skips when empty: what it names when it refuses. */
const supportedParts = [
  'audio_embeds',
  'audio_url',
  'image_embeds',
  'image_pil',
  'image_url',
  'input_audio',
  'input_image',
  'input_text',
  'output_text',
  'prompt_embeds',
  'refusal',
  'text',
  'thinking',
  'tool_reference',
  'video_url',
]
const textParts: Record<string, string> = {
  text: 'text',
  input_text: 'text',
  output_text: 'text',
  refusal: 'refusal',
  thinking: 'thinking',
}

/**
 * vLLM's parse_chat_messages and _postprocess_messages (vllm/entrypoints/chat_utils.py):
 * each message's content parts parsed (texts joined with "\n" for a "string" template,
 * kept as {"type": "text"} parts for an "openai" one, images as placeholders), the
 * assistant's tool calls and reasoning, the tool's call id, the name, an empty tool_calls
 * list dropped and tool-call arguments parsed from JSON ({} when they do not parse).
 * Throws KinfError invalid_request with vLLM's message for what it refuses.
 */
export function parseChatMessages(
  messages: readonly PyValue[],
  format: ContentFormat,
  media: MediaSupport,
): ParsedChat {
  const images: ImageItem[] = []
  const conversation = messages.map((message) => {
    if (!isPyDict(message)) throw refuse('Each message must be an object.')
    return parseMessage(message, format, media, images)
  })
  for (const message of conversation) parseToolCallArguments(message)
  return { conversation, images }
}

function parseMessage(
  message: PyDict,
  format: ContentFormat,
  media: MediaSupport,
  images: ImageItem[],
): PyDict {
  const role = message.get('role') as string
  const content = message.get('content') ?? null
  const reasoning = message.get('reasoning') ?? message.get('reasoning_content') ?? null
  const parts: PyValue[] =
    content === null
      ? []
      : typeof content === 'string'
        ? [
            new Map([
              ['type', 'text'],
              ['text', content],
            ]),
          ]
        : Array.isArray(content)
          ? content
          : []
  const before = images.length
  const parsed = parts.flatMap((part) => parsePart(part, format, media, images))
  const result: PyDict = new Map([['role', role]])
  if (format === 'openai') result.set('content', parsed)
  else result.set('content', joinTexts(parsed as string[], media, images.length - before))
  if (role === 'assistant') {
    const calls = message.get('tool_calls')
    if (calls !== undefined && calls !== null) result.set('tool_calls', copyCalls(calls))
    if (reasoning !== null) {
      result.set('reasoning', reasoning)
      result.set('reasoning_content', reasoning)
    }
  } else if (role === 'tool') {
    if (message.has('tool_call_id')) result.set('tool_call_id', message.get('tool_call_id') ?? null)
    const body = result.get('content')
    if (Array.isArray(body) && body.every((p) => isPyDict(p) && p.get('type') === 'text'))
      result.set('content', body.map((p) => String((p as PyDict).get('text') ?? '')).join('\n'))
  }
  const name = message.get('name')
  if (typeof name === 'string') result.set('name', name)
  const task = message.get('task')
  if (typeof task === 'string') result.set('task', task)
  if (role === 'developer') result.set('tools', message.get('tools') ?? null)
  return result
}

/** One part: text as a string ("string") or a text part ("openai"); an image as its stand-in. */
function parsePart(
  part: PyValue,
  format: ContentFormat,
  media: MediaSupport,
  images: ImageItem[],
): PyValue[] {
  if (typeof part === 'string') return keep(part, format)
  if (!isPyDict(part)) throw refuse('Each content part must be an object or a string.')
  const type = part.get('type') ?? null
  const uuid = part.get('uuid') ?? null
  if (type === null || uuid !== null) return parseUntypedPart(part, uuid, format, media, images)
  if (typeof type !== 'string') throw refuse("Invalid 'type' field in multimodal part.")
  const textField = textParts[type]
  if (textField !== undefined) {
    const text = part.get(textField) ?? null
    if (text === null) return []
    return keep(String(text), format)
  }
  if (type === 'image_url' || type === 'input_image') {
    const url = type === 'image_url' ? imageUrlOf(part.get('image_url')) : part.get('image_url')
    return addImage(typeof url === 'string' ? url : null, null, format, media, images)
  }
  if (supportedParts.includes(type)) {
    throw refuse(
      type.endsWith('_embeds')
        ? `You must set \`--enable-mm-embeds\` to input \`${type}\``
        : `This model does not accept ${type} input.`,
    )
  }
  throw refuse(
    `Unsupported chat content part type: '${type}'. Supported types: ${supportedParts.join(', ')}. (parameter=type, value=${type})`,
    'type',
  )
}

/** A part without a type, or with a uuid: read from the field it has (vLLM's fallback). */
function parseUntypedPart(
  part: PyDict,
  uuid: PyValue,
  format: ContentFormat,
  media: MediaSupport,
  images: ImageItem[],
): PyValue[] {
  if (part.has('image_url')) {
    const url = imageUrlOf(part.get('image_url'))
    return addImage(
      typeof url === 'string' ? url : null,
      uuid === null ? null : String(uuid),
      format,
      media,
      images,
    )
  }
  for (const field of [
    'image_pil',
    'image_embeds',
    'audio_embeds',
    'prompt_embeds',
    'audio_url',
    'input_audio',
    'video_url',
  ])
    if (part.has(field)) throw refuse(`This model does not accept ${field} input.`)
  if (part.has('tool_reference')) return keep(String(part.get('tool_reference') ?? ''), format)
  throw refuse("Missing 'type' field in multimodal part.")
}

function imageUrlOf(value: PyValue | undefined): PyValue | undefined {
  return isPyDict(value) ? value.get('url') : value
}

function addImage(
  url: string | null,
  uuid: string | null,
  format: ContentFormat,
  media: MediaSupport,
  images: ImageItem[],
): PyValue[] {
  if (media.imagePlaceholder === null)
    throw refuse('Multi-modal processor not available for text-only models')
  if (url === null && uuid === null) throw refuse('An image part needs an image_url or a uuid.')
  images.push({ url, uuid })
  return format === 'openai' ? [new Map([['type', 'image']])] : []
}

/** A text, kept when it is not empty (vLLM skips falsy parse results). */
function keep(text: string, format: ContentFormat): PyValue[] {
  if (format === 'openai')
    return [
      new Map([
        ['type', 'text'],
        ['text', text],
      ]),
    ]
  return text === '' ? [] : [text]
}

/**
 * The texts of a "string" prompt joined with "\n", the message's images' placeholders in
 * front of them (vLLM's _get_full_multimodal_text_prompt, interleave_strings off): as
 * many as its images minus those the text already spells out.
 */
function joinTexts(texts: string[], media: MediaSupport, images: number): string {
  const text = texts.join('\n')
  const placeholder = media.imagePlaceholder
  if (placeholder === null || images === 0) return text
  const spelled = text.split(placeholder).length - 1
  if (spelled > images)
    throw refuse(
      `Found more '${placeholder}' placeholders in input prompt than actual multimodal data items.`,
    )
  const missing = Array.from({ length: images - spelled }, () => placeholder)
  return (text === '' ? missing : [...missing, text]).join('\n')
}

function copyCalls(calls: PyValue): PyValue {
  if (!Array.isArray(calls)) return calls
  return calls.map((call) => {
    if (!isPyDict(call)) return call
    const copy = new Map(call)
    const fn = copy.get('function')
    if (isPyDict(fn)) copy.set('function', new Map(fn))
    return copy
  })
}

/** _postprocess_messages: tool-call arguments as dicts, an empty tool_calls dropped. */
function parseToolCallArguments(message: PyDict): void {
  const calls = message.get('tool_calls')
  if (message.get('role') !== 'assistant' || !Array.isArray(calls)) return
  if (calls.length === 0) {
    message.delete('tool_calls')
    return
  }
  for (const call of calls) {
    const fn = isPyDict(call) ? call.get('function') : undefined
    if (!isPyDict(fn)) continue
    const args = fn.get('arguments')
    if (typeof args === 'string') fn.set('arguments', parseArguments(args))
    else if (!Array.isArray(args) && !isPyDict(args)) fn.set('arguments', new Map())
  }
}

function parseArguments(text: string): PyValue {
  try {
    return parsePythonJson(text)
  } catch {
    return new Map()
  }
}
