import { estimatePromptTokens } from './estimate-prompt-tokens.ts'
import type { OpenAiRequest } from './openai-request.ts'
import { promptText } from './prompt-text.ts'

/**
 * The edge's estimate of the prompt a request sends: its messages' text (prompt-text.ts)
 * and the tool definitions, which vLLM's chat templates and Bedrock both put before the
 * model; a completions prompt of token ids counts exactly. Used wherever no tokenizer has
 * counted the prompt: quota admission, prompt-length rules, the context check.
 */
export function estimateRequestPromptTokens(request: OpenAiRequest): number {
  if (request.kind === 'completion') {
    const prompt = request.body.prompt
    if (Array.isArray(prompt)) return prompt.length
    return estimatePromptTokens(typeof prompt === 'string' ? prompt : '')
  }
  return estimatePromptTokens(promptText(request)) + estimateToolTokens(request)
}

/**
 * The tool definitions' share of that estimate (tools, and the legacy functions). Only for
 * an estimate: where a tokenizer counts, the chat template renders the tools into the
 * prompt (control-plane/tokenizer/prompt-ids.ts), so they are in its count already.
 */
function estimateToolTokens(request: OpenAiRequest): number {
  if (request.kind !== 'chat') return 0
  const { tools, functions } = request.body as { tools?: unknown; functions?: unknown }
  let tokens = 0
  for (const definitions of [tools, functions])
    if (Array.isArray(definitions) && definitions.length > 0)
      tokens += estimatePromptTokens(JSON.stringify(definitions))
  return tokens
}

/**
 * How many sequences a request generates, each up to its max_tokens: `n` choices, or
 * completions' `best_of` when larger (vLLM generates best_of and returns the n best).
 */
export function sequencesOf(request: OpenAiRequest): number {
  const body = request.body as { n?: number | null; best_of?: number | null }
  return Math.max(1, body.n ?? 1, request.kind === 'completion' ? (body.best_of ?? 1) : 1)
}
