import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { type ChatTemplate, renderChatTemplate } from './chat-template.ts'
import type { ImageFeature } from './image-tokens.ts'
import type { ImageItem, MediaSupport } from './parse-chat-messages.ts'
import { parseChatMessages } from './parse-chat-messages.ts'
import { TemplateRenderError } from './python-interpreter.ts'
import { isPyDict, type PyDict, type PyValue } from './python-json.ts'

/** A chat request's fields vLLM renders, read from the body as Python reads it. */
export interface ChatRequestInput {
  messages: PyValue[]
  /** The request's tools (function definitions), null when it has none. */
  tools: PyValue[] | null
  documents: PyValue | null
  addGenerationPrompt: boolean
  continueFinalMessage: boolean
  chatTemplateKwargs: PyDict | null
  reasoningEffort: PyValue | null
  /** vLLM's add_special_tokens for chat: false, the template places them. */
  addSpecialTokens: boolean
}

/** The prompt vLLM runs for a chat request. */
export interface ChatPrompt {
  text: string
  tokenIds: number[]
  multimodal: ImageFeature[]
}

/** What rendering needs of the model. */
export interface ChatRenderer {
  template(tools: PyValue[] | null): ChatTemplate
  specialTokens: PyDict
  media: MediaSupport
  now: () => Date
  tokenize(
    text: string,
    addSpecialTokens: boolean,
    images: readonly ImageItem[],
  ): {
    ids: number[]
    features: ImageFeature[]
  }
}

/**
 * Names apply_chat_template takes as its own parameters: a chat_template_kwargs entry of
 * one of these does not reach the template as a variable.
 */
const consumed = new Set([
  'conversation',
  'tools',
  'documents',
  'chat_template',
  'add_generation_prompt',
  'continue_final_message',
  'tokenize',
  'padding',
  'truncation',
  'max_length',
  'return_tensors',
  'return_dict',
  'return_assistant_tokens_mask',
  'tokenizer_kwargs',
])

/**
 * vLLM's chat serving path (vllm/entrypoints/openai/chat_completion/protocol.py
 * build_chat_params, vllm/renderers/hf.py): the request's chat_template_kwargs merged
 * under its own fields (add_generation_prompt, continue_final_message, documents,
 * reasoning_effort, and enable_thinking from reasoning_effort), kept only where the
 * template reads them (resolve_chat_template_kwargs), the messages normalized for the
 * template's content format, the tools as pydantic's model_dump, the template rendered
 * with the special tokens, the text tokenized. Throws KinfError invalid_request with the
 * message vLLM answers 400 with.
 */
export function renderChatPrompt(renderer: ChatRenderer, request: ChatRequestInput): ChatPrompt {
  if (request.continueFinalMessage && request.addGenerationPrompt)
    throw badRequest(
      'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
    )
  const userKwargs = request.chatTemplateKwargs ?? new Map<string, PyValue>()
  const unexpected = ['chat_template', 'tokenize'].filter((name) => userKwargs.has(name))
  if (unexpected.length > 0)
    throw badRequest(
      `Found unexpected chat template kwargs from request: {${unexpected.map((n) => `'${n}'`).join(', ')}}`,
    )
  const kwargs = new Map(userKwargs)
  const extra: [string, PyValue][] = [
    ['add_generation_prompt', request.addGenerationPrompt],
    ['continue_final_message', request.continueFinalMessage],
    ['documents', request.documents],
    ['reasoning_effort', request.reasoningEffort],
  ]
  if (request.reasoningEffort !== null && !userKwargs.has('enable_thinking'))
    extra.push(['enable_thinking', request.reasoningEffort !== 'none'])
  for (const [name, value] of extra) if (value !== null && value !== 'auto') kwargs.set(name, value)
  const template = renderer.template(request.tools)
  const { conversation, images } = parseChatMessages(
    request.messages,
    template.contentFormat,
    renderer.media,
  )
  const variables = new Map(renderer.specialTokens)
  for (const [name, value] of kwargs)
    if (template.names.has(name) && !consumed.has(name)) variables.set(name, value)
  let text: string
  try {
    text = renderChatTemplate(template, {
      messages: conversation,
      tools: request.tools === null ? null : request.tools.map(dumpTool),
      documents: kwargs.get('documents') ?? null,
      addGenerationPrompt: kwargs.get('add_generation_prompt') === true,
      continueFinalMessage: kwargs.get('continue_final_message') === true,
      variables,
      now: renderer.now,
    })
  } catch (error) {
    if (error instanceof TemplateRenderError) throw badRequest(error.message)
    throw error
  }
  const { ids, features } = renderer.tokenize(text, request.addSpecialTokens, images)
  return { text, tokenIds: ids, multimodal: features }
}

/**
 * A tool as vLLM hands it to the template, `tool.model_dump()` of ChatCompletionToolsParam:
 * type, then function with name, description and parameters (null when absent) before
 * the client's other fields, then the tool's other fields.
 */
export function dumpTool(tool: PyValue): PyValue {
  if (!isPyDict(tool)) return tool
  const fn = tool.get('function')
  const declared: [string, PyValue][] = isPyDict(fn)
    ? [
        ['name', fn.get('name') ?? null],
        ['description', fn.get('description') ?? null],
        ['parameters', fn.get('parameters') ?? null],
      ]
    : []
  const dumpedFunction = new Map(declared)
  if (isPyDict(fn)) for (const [k, v] of fn) if (!dumpedFunction.has(k)) dumpedFunction.set(k, v)
  const dumped: PyDict = new Map<string, PyValue>([
    ['type', tool.get('type') ?? 'function'],
    ['function', dumpedFunction],
  ])
  for (const [k, v] of tool) if (!dumped.has(k)) dumped.set(k, v)
  return dumped
}

function badRequest(message: string): KinfError {
  return new KinfError('invalid_request', message, { param: 'messages' })
}
