import { Template } from '@huggingface/jinja'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { TemplateMessage } from './parse-chat-messages.ts'
import { pythonStripFunctions, usePythonStrip } from './use-python-strip.ts'

export interface RenderOptions {
  /** Ends the prompt with the opening of an assistant turn. Default true, as in vLLM. */
  addGenerationPrompt?: boolean
  /**
   * Extra template variables, vLLM's `chat_template_kwargs` (Qwen3 reads
   * `enable_thinking`). As in vLLM they are applied last, so they win over
   * `addGenerationPrompt`; `messages` cannot be replaced.
   */
  chatTemplateKwargs?: Record<string, unknown>
}

/**
 * Compiles a Hugging Face chat template once and returns a function rendering it the way
 * transformers' `apply_chat_template(..., tokenize=False)` does, which is what vLLM calls:
 * the variables are the special tokens of the tokenizer config, `messages`,
 * `add_generation_prompt` and the request's `chat_template_kwargs`. `@huggingface/jinja`
 * follows Jinja2's semantics for what chat templates use (slicing, namespaces, string
 * methods, `tojson` with Python's separators) except `strip`, which `usePythonStrip`
 * fixes; the tests compare the result with transformers.
 */
export function createChatTemplateRenderer(
  source: string,
  specialTokens: Readonly<Record<string, unknown>>,
): (messages: readonly TemplateMessage[], options?: RenderOptions) => string {
  const template = new Template(source)
  usePythonStrip(template.parsed)
  return (messages, options = {}) => {
    const kwargs = options.chatTemplateKwargs ?? {}
    if (typeof kwargs !== 'object' || kwargs === null || Array.isArray(kwargs)) {
      throw new KinfError('invalid_request', 'chat_template_kwargs must be an object')
    }
    if (Object.hasOwn(kwargs, 'messages')) {
      throw new KinfError('invalid_request', 'chat_template_kwargs cannot set "messages"')
    }
    try {
      return template.render({
        ...specialTokens,
        messages,
        add_generation_prompt: options.addGenerationPrompt ?? true,
        ...kwargs,
        ...pythonStripFunctions,
      })
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      throw new KinfError('invalid_request', `the chat template failed: ${reason}`, {
        cause: error,
      })
    }
  }
}
