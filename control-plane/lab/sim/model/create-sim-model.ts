import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { type ChatTemplate, compileChatTemplate, variablesOf } from './chat-template.ts'
import { createSimTokenizer, type SimTokenizer } from './create-sim-tokenizer.ts'
import { expandImages, type ImageTokens, imageTokensOf } from './image-tokens.ts'
import { loadModelFiles, type ModelFiles } from './load-model-files.ts'
import { TemplateRenderError } from './python-interpreter.ts'
import { fromJavaScript, type PyValue } from './python-json.ts'
import {
  type ChatPrompt,
  type ChatRenderer,
  type ChatRequestInput,
  renderChatPrompt,
} from './render-chat-prompt.ts'

/** Options of `applyChatTemplate`, for callers holding plain JavaScript messages. */
export interface SimChatOptions {
  tools?: readonly unknown[]
  documents?: readonly unknown[]
  addGenerationPrompt?: boolean
  continueFinalMessage?: boolean
  chatTemplateKwargs?: Readonly<Record<string, unknown>>
}

/**
 * A model as the simulated vLLM pod serves it: its tokenizer (tokens.js over the model's
 * tokenizer.json) and its chat rendering, both the simulator's own.
 */
export interface SimModel extends SimTokenizer {
  /** The tokenizer source it was loaded from: a built-in name or a path. */
  readonly source: string
  /** Whether the model takes images (Gemma 3's processor), and how it expands them. */
  readonly imageTokens: ImageTokens | null
  /** vLLM's chat path: what /v1/chat/completions and /tokenize with messages run. */
  renderChat(request: ChatRequestInput): ChatPrompt
  /** The same, from plain JavaScript values (benchmarks and tests). */
  applyChatTemplate(messages: readonly unknown[], options?: SimChatOptions): ChatPrompt
}

export interface SimModelOptions {
  /** What strftime_now reads (gpt-oss prints the date); the wall clock by default. */
  now?: () => Date
  /** Soft tokens per image, where the model takes images (processor_config's, else 256). */
  tokensPerImage?: number
  /** Characters of text runs whose ids are kept (tokenization on the request path). */
  segmentCacheChars?: number
}

export type SimModelResult = { ok: true; model: SimModel } | { ok: false; error: KinfError }

/** Loads a model from a tokenizer source; a source that cannot be served is a value. */
export function loadSimModel(source: string, options: SimModelOptions = {}): SimModelResult {
  const files = loadModelFiles(source)
  if (!files.ok) return files
  try {
    return { ok: true, model: createSimModel(files.files, options) }
  } catch (error) {
    const message = `tokenizer ${source}: ${(error as Error).message}`
    return {
      ok: false,
      error: KinfError.isInstance(error)
        ? error
        : new KinfError('invalid_config', message, { cause: error }),
    }
  }
}

export function createSimModel(files: ModelFiles, options: SimModelOptions = {}): SimModel {
  const tokenizer = createSimTokenizer(files, { segmentCacheChars: options.segmentCacheChars })
  const templates = compileTemplates(files)
  const encode = (text: string) => tokenizer.encode(text)
  const imageTokens = imageTokensOf(files, encode, options.tokensPerImage)
  const placeholderId =
    imageTokens === null ? undefined : tokenizer.tokenToId(imageTokens.placeholder)
  const renderer: ChatRenderer = {
    template: (tools) => pickTemplate(templates, tools !== null),
    specialTokens: variablesOf(tokenizer.specialTokens),
    media: { imagePlaceholder: imageTokens?.placeholder ?? null },
    now: options.now ?? (() => new Date()),
    tokenize(text, addSpecialTokens, images) {
      if (imageTokens === null || placeholderId === undefined || images.length === 0)
        return { ids: tokenizer.encode(text, { addSpecialTokens }), features: [] }
      return expandImages(
        text,
        images,
        imageTokens,
        (expanded) => tokenizer.encode(expanded, { addSpecialTokens }),
        placeholderId,
      )
    },
  }
  const renderChat = (request: ChatRequestInput) => renderChatPrompt(renderer, request)
  return {
    ...tokenizer,
    source: files.source,
    imageTokens,
    renderChat,
    applyChatTemplate: (messages, chat = {}) =>
      renderChat({
        messages: messages.map(fromJavaScript),
        tools: chat.tools === undefined ? null : chat.tools.map(fromJavaScript),
        documents: chat.documents === undefined ? null : fromJavaScript(chat.documents),
        addGenerationPrompt: chat.addGenerationPrompt ?? true,
        continueFinalMessage: chat.continueFinalMessage ?? false,
        chatTemplateKwargs:
          chat.chatTemplateKwargs === undefined
            ? null
            : (fromJavaScript(chat.chatTemplateKwargs) as Map<string, PyValue>),
        reasoningEffort: null,
        addSpecialTokens: false,
      }),
  }
}

type Templates = ChatTemplate | Map<string, ChatTemplate> | null

function compileTemplates(files: ModelFiles): Templates {
  const source = files.chatTemplate
  try {
    if (source === null) return null
    if (typeof source === 'string') return compileChatTemplate(source)
    return new Map(Object.entries(source).map(([name, text]) => [name, compileChatTemplate(text)]))
  } catch (error) {
    if (!(error instanceof TemplateRenderError)) throw error
    throw new KinfError(
      'invalid_config',
      `tokenizer ${files.source}: its chat template does not parse: ${error.message}`,
    )
  }
}

/**
 * transformers' get_chat_template: a model with named templates uses "tool_use" when the
 * request has tools and the model has one, else "default"; none at all is vLLM's refusal.
 */
function pickTemplate(templates: Templates, hasTools: boolean): ChatTemplate {
  if (templates === null)
    throw new KinfError(
      'invalid_request',
      'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.',
    )
  if (!(templates instanceof Map)) return templates
  const named = (hasTools ? templates.get('tool_use') : undefined) ?? templates.get('default')
  if (named !== undefined) return named
  throw new KinfError(
    'invalid_request',
    `This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the \`chat_template\` argument. Available template names are ${[...templates.keys()].sort().join(', ')}.`,
  )
}
