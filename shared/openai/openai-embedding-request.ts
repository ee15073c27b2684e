import { z } from 'zod'
import { estimatePromptTokens } from './estimate-prompt-tokens.ts'
import { type RequestIssues, readableIssue, requestIssues } from './openai-request.ts'

/** OpenAI's limit on the inputs of one embeddings request. */
export const maxEmbeddingInputs = 2048

const TokenIds = z.array(z.int().min(0)).min(1)
const Text = z.string().min(1)

/**
 * POST /v1/embeddings as OpenAI defines it (and vLLM's pooling server accepts it): a text,
 * a list of texts, a list of token ids, or a list of such lists; at most 2,048 inputs.
 * Unknown fields are kept: vLLM's own (`truncate_prompt_tokens`, `add_special_tokens`)
 * go to the pods as sent, its scheduler's and KV transfer's only through the tenant's
 * allow-list (shared/openai/vllm-only-fields.ts), as for chat.
 */
export const OpenAiEmbeddingRequest = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.union(
    [
      Text,
      z.array(Text).min(1).max(maxEmbeddingInputs),
      TokenIds,
      z.array(TokenIds).min(1).max(maxEmbeddingInputs),
    ],
    {
      error: `must be a non-empty string, or a list (1 to ${maxEmbeddingInputs} items) of non-empty strings, of token ids, or of non-empty lists of token ids`,
    },
  ),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.int().min(1).optional(),
  user: z.string().max(256).optional(),
})
export type OpenAiEmbeddingRequest = z.infer<typeof OpenAiEmbeddingRequest>

/** One input, as the pod embeds it: a text, or token ids run as they are. */
export type EmbeddingInput = { text: string } | { ids: readonly number[] }

/** The inputs of a request, each on its own (vLLM runs each as its own engine request). */
export function embeddingInputs(request: OpenAiEmbeddingRequest): EmbeddingInput[] {
  const { input } = request
  if (typeof input === 'string') return [{ text: input }]
  if (input.every((item) => typeof item === 'number')) return [{ ids: input as number[] }]
  return (input as (string | number[])[]).map((item) =>
    typeof item === 'string' ? { text: item } : { ids: item },
  )
}

/**
 * The edge's estimate of the tokens a request embeds (every input's, token ids exactly),
 * where no tokenizer has counted them: quota admission, prompt-length rules.
 */
export function estimateEmbeddingTokens(inputs: readonly EmbeddingInput[]): number {
  let tokens = 0
  for (const input of inputs)
    tokens += 'ids' in input ? input.ids.length : estimatePromptTokens(input.text)
  return tokens
}

/**
 * Parses an embeddings body; a body that does not parse is a value with every problem in
 * words and the field of the first one (as parseOpenAiRequest answers chat).
 */
export function parseOpenAiEmbedding(
  body: unknown,
): { request: OpenAiEmbeddingRequest } | { issues: RequestIssues } {
  const parsed = OpenAiEmbeddingRequest.safeParse(body)
  if (parsed.success) return { request: parsed.data }
  // The union's own message says what input may be; readableIssue would list only types.
  const readIssue = (issue: z.core.$ZodIssue) =>
    issue.code === 'invalid_union'
      ? `${issue.path.join('.')}: ${issue.message}`
      : readableIssue(issue)
  return { issues: requestIssues(parsed.error.issues, readIssue) }
}
