import { Environment, Template } from '@huggingface/jinja'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { detectContentFormat } from './detect-content-format.ts'
import {
  type ChatImage,
  type ContentFormat,
  type ImagePlaceholder,
  parseChatMessages,
  type TemplateMessage,
} from './parse-chat-messages.ts'
import { createPythonInterpreter } from './python-interpreter.ts'
import { pythonStrftime } from './python-strftime.ts'
import { pythonStrip } from './python-string-methods.ts'
import type { ChatTemplates } from './read-tokenizer-files.ts'
import { bool, fn, int, list, none, pyStr, str, toValue, type Value } from './template-values.ts'
import { toolDicts } from './tool-dicts.ts'

export interface ChatTemplateOptions {
  /** Ends the prompt with the opening of an assistant turn. Default true, as in vLLM. */
  addGenerationPrompt?: boolean
  /**
   * vLLM's `continue_final_message`: the prompt ends inside the final message, with no
   * end-of-turn, so the model continues it (an assistant prefill). Needs
   * `addGenerationPrompt: false`.
   */
  continueFinalMessage?: boolean
  /**
   * The request's `tools`, as the client sent them (see `toolDicts` for what the template
   * gets). A number may be a template value already, the int or float Python read (see
   * withPythonNumbers); so may one of `chatTemplateKwargs`.
   */
  tools?: readonly unknown[] | null
  /** vLLM's `documents`, for templates that render retrieved documents (RAG). */
  documents?: readonly unknown[] | null
  /**
   * Extra template variables, vLLM's `chat_template_kwargs` (`enable_thinking`,
   * `reasoning_effort`, ...). The options above win over the same names here, as vLLM
   * merges them (ChatCompletionRequest.build_chat_params); `messages`, `tools`,
   * `chat_template` and `tokenize` are refused.
   */
  chatTemplateKwargs?: Record<string, unknown>
}

/**
 * What a chat template renders: the prompt text, from the messages as vLLM normalizes them,
 * and the images it holds placeholders for, in order.
 */
export type ChatRenderer = (
  messages: unknown,
  options?: ChatTemplateOptions,
) => { text: string; images: ChatImage[] }

class TemplateRaised extends Error {}

/** Refused by vLLM (resolve_chat_template_kwargs) or by Python's call to the renderer. */
const refusedKwargs = ['chat_template', 'tokenize', 'messages', 'conversation', 'tools']
/** apply_chat_template's own parameters: consumed there, never template variables. */
const consumedKwargs = new Set([
  'add_generation_prompt',
  'continue_final_message',
  'documents',
  'padding',
  'truncation',
  'max_length',
  'return_tensors',
  'return_dict',
  'return_assistant_tokens_mask',
  'tokenizer_kwargs',
])

/** Python's range(stop) / range(start, stop[, step]), as a list. */
function range(args: Value[]): Value {
  const numbers = args.map((arg) => Number(arg.value))
  const [start, stop, step] =
    numbers.length === 1 ? [0, numbers[0] as number, 1] : [numbers[0], numbers[1], numbers[2] ?? 1]
  if (!Number.isInteger(start) || !Number.isInteger(stop) || !Number.isInteger(step) || step === 0)
    throw new TypeError('range() needs integers and a non-zero step')
  const count = Math.max(0, Math.ceil(((stop as number) - (start as number)) / (step as number)))
  if (count > 1_000_000) throw new RangeError('range() too long for a chat template')
  return list(
    Array.from({ length: count }, (_, i) => int((start as number) + i * (step as number))),
  )
}

function globals(now: () => number): [string, Value][] {
  return [
    ['true', bool(true)],
    ['false', bool(false)],
    ['none', none()],
    ['True', bool(true)],
    ['False', bool(false)],
    ['None', none()],
    ['range', fn(range)],
    [
      'raise_exception',
      fn(([message]) => {
        throw new TemplateRaised(message === undefined ? '' : pyStr(message))
      }),
    ],
    ['strftime_now', fn(([format]) => str(pythonStrftime(now(), pyStr(format ?? str('')))))],
  ]
}

/** transformers' `get_chat_template`: the one template, or by name ("tool_use" with tools). */
function pickTemplate(templates: ChatTemplates | null, hasTools: boolean): string {
  if (templates === null)
    throw new KinfError(
      'invalid_request',
      'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.',
    )
  if (typeof templates === 'string') return templates
  const chosen = (hasTools ? templates.get('tool_use') : undefined) ?? templates.get('default')
  if (chosen === undefined)
    throw new KinfError(
      'invalid_request',
      `This model has multiple chat templates with no default specified! (${[...templates.keys()].join(', ')})`,
    )
  return chosen
}

const continueTag = 'CONTINUE_FINAL_MESSAGE_TAG '

/**
 * transformers' continue_final_message (render_jinja_template, since PR #40732): a tag is
 * appended to the final message's text (its last text part), and the rendered chat is
 * cut where the tag is (with the whitespace before it when the template stripped what
 * followed), so the turn stays open. Returns the final text.
 */
function markFinalMessage(messages: TemplateMessage[]): string {
  const final = messages.at(-1) as TemplateMessage
  if (typeof final.content === 'string') {
    const text = final.content
    final.content = text + continueTag
    return text
  }
  const part = final.content.findLast((candidate) => candidate.type === 'text')
  if (part === undefined)
    throw new KinfError(
      'invalid_request',
      'continue_final_message is set but we could not find any text to continue in the final message!',
      { param: 'continue_final_message' },
    )
  const text = part.text
  part.text = text + continueTag
  return text
}

function cutAtTag(rendered: string, final: string): string {
  const tag = continueTag.trim()
  if (!rendered.includes(pythonStrip(final, null, true, true)) || !rendered.includes(tag))
    throw new KinfError(
      'invalid_request',
      'continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.',
      { param: 'continue_final_message' },
    )
  const at = rendered.lastIndexOf(tag)
  if (rendered.startsWith(continueTag, at)) return rendered.slice(0, at)
  return pythonStrip(rendered.slice(0, at), null, false, true)
}

function checkKwargs(kwargs: unknown): Record<string, unknown> {
  if (typeof kwargs !== 'object' || kwargs === null || Array.isArray(kwargs))
    throw new KinfError('invalid_request', 'chat_template_kwargs must be an object', {
      param: 'chat_template_kwargs',
    })
  const refused = refusedKwargs.filter((key) => Object.hasOwn(kwargs, key))
  if (refused.length > 0)
    throw new KinfError(
      'invalid_request',
      `chat_template_kwargs cannot set ${refused.map((key) => `"${key}"`).join(', ')}`,
      { param: 'chat_template_kwargs' },
    )
  return kwargs as Record<string, unknown>
}

/**
 * Renders chat templates as transformers' apply_chat_template(tokenize=False) does, which
 * is what vLLM calls: Jinja with trim_blocks and lstrip_blocks (as `@huggingface/jinja`
 * parses), computed as Python's jinja2 computes (see createPythonInterpreter), with
 * raise_exception, strftime_now (on `now`, UTC), range and namespace; the variables are
 * the tokenizer's special tokens, the request's chat_template_kwargs, then `messages`,
 * `tools`, `documents` and `add_generation_prompt`. Messages are normalized as vLLM does
 * for the template's content format; images are taken only when the model's prompt has an
 * `imagePlaceholder` for them (the caller expands them, see createImageExpander). Throws
 * KinfError invalid_request for what vLLM refuses, and with the template's own message
 * for raise_exception.
 */
export function createChatTemplateRenderer(
  templates: ChatTemplates | null,
  specialTokens: ReadonlyMap<string, Value>,
  now: () => number,
  imagePlaceholder: ImagePlaceholder = null,
): ChatRenderer {
  const compiled = new Map<string, { template: Template; format: ContentFormat }>()
  const compile = (source: string) => {
    let entry = compiled.get(source)
    if (entry === undefined) {
      let template: Template
      try {
        template = new Template(source)
      } catch (error) {
        throw new KinfError('invalid_request', `the chat template does not parse: ${error}`, {
          cause: error,
        })
      }
      entry = { template, format: detectContentFormat(template.parsed) }
      compiled.set(source, entry)
    }
    return entry
  }
  return (messages, options = {}) => {
    const addGenerationPrompt = options.addGenerationPrompt ?? true
    const continueFinal = options.continueFinalMessage ?? false
    if (continueFinal && addGenerationPrompt)
      throw new KinfError(
        'invalid_request',
        'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
        { param: 'continue_final_message' },
      )
    const kwargs = checkKwargs(options.chatTemplateKwargs ?? {})
    const tools = toolDicts(options.tools)
    const documents = options.documents ?? (kwargs.documents as unknown[] | undefined) ?? null
    if (
      documents !== null &&
      (!Array.isArray(documents) ||
        documents.some((d) => typeof d !== 'object' || d === null || Array.isArray(d)))
    )
      throw new KinfError(
        'invalid_request',
        "Documents should be a list of dicts with 'title' and 'text' keys!",
      )
    const { template, format } = compile(pickTemplate(templates, tools !== null))
    const { messages: conversation, images } = parseChatMessages(messages, format, imagePlaceholder)
    const final = continueFinal ? markFinalMessage(conversation) : null
    const env = new Environment()
    const set = (name: string, value: Value) => env.setVariable(name, value as never)
    for (const [name, value] of globals(now)) set(name, value)
    for (const [name, value] of specialTokens) set(name, value)
    for (const [name, value] of Object.entries(kwargs))
      if (!consumedKwargs.has(name)) set(name, toValue(value))
    set('messages', toValue(conversation))
    set('tools', toValue(tools))
    set('documents', toValue(documents))
    set('add_generation_prompt', bool(addGenerationPrompt))
    let rendered: string
    try {
      rendered = String(createPythonInterpreter(env).run(template.parsed).value)
    } catch (error) {
      if (error instanceof TemplateRaised) throw new KinfError('invalid_request', error.message)
      if (KinfError.isInstance(error)) throw error
      const reason = error instanceof Error ? error.message : String(error)
      throw new KinfError('invalid_request', `the chat template failed: ${reason}`, {
        cause: error,
      })
    }
    return { text: final === null ? rendered : cutAtTag(rendered, final), images }
  }
}
