import type { RenderOptions } from './create-chat-template-renderer.ts'
import type { TemplateMessage } from './parse-chat-messages.ts'

const toolResponse = (content: string) =>
  content.startsWith('<tool_response>') && content.endsWith('</tool_response>')

/**
 * Qwen3's chat template written out in code for plain conversations (no tools, tool calls,
 * reasoning or think blocks), which are nearly all requests: the Jinja interpreter costs
 * tens of microseconds a request on the scorer's hot path. Returns null for anything else,
 * which then goes to the template itself. Tests compare the two on random conversations.
 */
export function renderQwen3Chat(
  messages: readonly TemplateMessage[],
  options: RenderOptions = {},
): string | null {
  const kwargs = options.chatTemplateKwargs ?? {}
  for (const key of Object.keys(kwargs)) if (key !== 'enable_thinking') return null
  const enableThinking = kwargs.enable_thinking
  if (enableThinking !== undefined && typeof enableThinking !== 'boolean') return null
  let lastQuery = messages.length - 1
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as TemplateMessage
    if (
      message.tool_calls !== undefined ||
      message.reasoning_content !== undefined ||
      message.role === 'tool'
    )
      return null
    if (message.role === 'assistant' && message.content.includes('</think>')) return null
    if (message.role === 'user' && toolResponse(message.content)) return null
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    if ((messages[i] as TemplateMessage).role === 'user') {
      lastQuery = i
      break
    }
  }
  let out = ''
  messages.forEach((message, i) => {
    if (message.role === 'system' && i === 0)
      out += `<|im_start|>system\n${message.content}<|im_end|>\n`
    else if (message.role === 'user' || message.role === 'system') {
      out += `<|im_start|>${message.role}\n${message.content}<|im_end|>\n`
    } else if (message.role === 'assistant') {
      // After the last user query, the last assistant message gets an empty think block.
      if (i > lastQuery && i === messages.length - 1) {
        out += `<|im_start|>assistant\n<think>\n\n</think>\n\n${message.content.replace(/^\n+/, '')}<|im_end|>\n`
      } else out += `<|im_start|>assistant\n${message.content}<|im_end|>\n`
    }
    // The developer role has no branch in Qwen3's template: it renders nothing.
  })
  if (options.addGenerationPrompt ?? true) {
    out += '<|im_start|>assistant\n'
    if (enableThinking === false) out += '<think>\n\n</think>\n\n'
  }
  return out
}
