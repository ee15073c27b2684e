import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { ChatCompletionRequest } from '../../shared/openai/chat-completion-request.ts'
import type { OpenAiRequest } from '../../shared/openai/openai-request.ts'
import type { ChatTemplateOptions, MmFeature, Tokenizer } from './tokenizer.ts'
import { withPythonNumbers } from './with-python-numbers.ts'

const Documents = z.array(z.record(z.string(), z.string())).nullish()
const ReasoningEffort = z
  .enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])
  .nullish()

function field<S extends z.ZodType>(body: object, name: string, schema: S): z.output<S> {
  const parsed = schema.safeParse((body as Record<string, unknown>)[name])
  if (!parsed.success)
    throw new KinfError('invalid_request', `${name}: ${parsed.error.issues[0]?.message}`, {
      param: name,
    })
  return parsed.data
}

/**
 * The chat template options vLLM builds from a chat request (build_chat_params): the
 * request's add_generation_prompt, continue_final_message, documents and tools (kept
 * under tool_choice "none": vLLM drops them then only with
 * --exclude-tools-when-tool-choice-none), and chat_template_kwargs with reasoning_effort
 * over them and enable_thinking set from it when the kwargs do not set it. With the
 * body's JSON text, the numbers of the tools and kwargs are read as vLLM's Python reads
 * them (see withPythonNumbers): without it, a tool schema's `50.0` renders as `50`.
 */
export function chatTemplateOptions(
  body: ChatCompletionRequest,
  bodyText: string | null = null,
): ChatTemplateOptions {
  if (typeof (body as Record<string, unknown>).chat_template === 'string')
    throw new KinfError(
      'invalid_request',
      'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.',
      { param: 'chat_template' },
    )
  const kwargs = { ...(body.chat_template_kwargs ?? {}) }
  const effort = field(body, 'reasoning_effort', ReasoningEffort)
  if (effort !== null && effort !== undefined) {
    if (!Object.hasOwn(kwargs, 'enable_thinking')) kwargs.enable_thinking = effort !== 'none'
    kwargs.reasoning_effort = effort
  }
  const parsed = { tools: body.tools ?? null, chat_template_kwargs: kwargs }
  const read = bodyText === null ? parsed : withPythonNumbers(parsed, bodyText)
  return {
    addGenerationPrompt: body.add_generation_prompt,
    continueFinalMessage: body.continue_final_message,
    tools: read.tools,
    documents: field(body, 'documents', Documents) ?? null,
    chatTemplateKwargs: read.chat_template_kwargs,
  }
}

/**
 * The prompt token ids a vLLM pod runs for a request: for chat, the messages normalized,
 * the chat template rendered with the request's tools and options, and tokenized without
 * special tokens (with them when the request sets add_special_tokens); for completions,
 * the prompt tokenized with special tokens unless the request turns them off, or its ids
 * as given. The scorer and kinfctl explain count tokens here, so the router's ids are the
 * pod's. `bodyText`, the JSON text the request was parsed from, lets a chat's tool
 * schemas print their numbers as vLLM prints them (see chatTemplateOptions); callers that
 * have it should pass it. Throws KinfError invalid_request, naming the field, for what
 * vLLM would refuse.
 */
export function promptIds(
  tokenizer: Tokenizer,
  request: OpenAiRequest,
  bodyText: string | null = null,
): number[] {
  return promptOf(tokenizer, request, bodyText).ids
}

/** A request's prompt as its pod runs it: the ids, and the images the ids hold. */
export interface Prompt {
  ids: number[]
  /** The placeholder ranges of the images with an identifier (ChatPrompt.mmFeatures). */
  mmFeatures: MmFeature[]
}

/** promptIds, with the images of a chat that holds some (see ChatPrompt.mmFeatures). */
export function promptOf(
  tokenizer: Tokenizer,
  request: OpenAiRequest,
  bodyText: string | null = null,
): Prompt {
  const addSpecialTokens = (request.body as { add_special_tokens?: unknown }).add_special_tokens
  if (
    addSpecialTokens !== undefined &&
    addSpecialTokens !== null &&
    typeof addSpecialTokens !== 'boolean'
  )
    throw new KinfError('invalid_request', 'add_special_tokens must be a boolean', {
      param: 'add_special_tokens',
    })
  if (request.kind === 'chat') {
    const chat = tokenizer.applyChatTemplate(request.body.messages, {
      ...chatTemplateOptions(request.body, bodyText),
      addSpecialTokens: addSpecialTokens === true,
    })
    return { ids: chat.tokenIds, mmFeatures: chat.mmFeatures ?? [] }
  }
  const { prompt } = request.body
  if (typeof prompt === 'string')
    return {
      ids: tokenizer.encode(prompt, { addSpecialTokens: addSpecialTokens !== false }),
      mmFeatures: [],
    }
  const outside = prompt.find((id) => id >= tokenizer.vocabSize)
  if (outside !== undefined)
    throw new KinfError('invalid_request', `Token id ${outside} is out of vocabulary`, {
      param: 'prompt',
    })
  return { ids: prompt, mmFeatures: [] }
}
