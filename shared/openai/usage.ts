import { z } from 'zod'

/** A usage block as Kinference writes one (the answers it translates): every count present. */
export const CompleteUsage = z.object({
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
  total_tokens: z.int().min(0),
  prompt_tokens_details: z.object({ cached_tokens: z.int().min(0) }),
})
export type CompleteUsage = z.infer<typeof CompleteUsage>

/**
 * OpenAI's usage block as read from vLLM and the edge's other upstreams. vLLM gives
 * prompt_tokens_details only with --enable-prompt-tokens-details; with it, current
 * releases report cached_tokens 0 too (vLLM #44383) and leave the details out only when
 * the count is unknown, while older ones also left out a count of 0 (a truthiness test).
 * So a missing cached_tokens from a pod that has reported it before means 0
 * (docs/vllm-wire.md, "Cached tokens").
 */
export const Usage = z.looseObject({
  prompt_tokens: z.int().min(0).optional(),
  completion_tokens: z.int().min(0).optional(),
  total_tokens: z.int().min(0).optional(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.int().min(0).nullish() }).nullish(),
})
export type Usage = z.infer<typeof Usage>

/** `"usage": {`, with or without the space Python's json module puts there. */
const usageObject = /"usage":\s*\{/

/** Whether a JSON text may carry a usage object: cheap, so token chunks are not parsed. */
export function mayCarryUsage(json: string): boolean {
  return usageObject.test(json)
}

/** The usage block of a parsed response or stream chunk; null when absent or malformed. */
export function usageOf(value: unknown): Usage | null {
  if (typeof value !== 'object' || value === null) return null
  const parsed = Usage.safeParse((value as { usage?: unknown }).usage)
  return parsed.success ? parsed.data : null
}

/** The usage block of a JSON response or of one SSE event's data. */
export function usageOfJson(text: string): Usage | null {
  if (!mayCarryUsage(text)) return null
  try {
    return usageOf(JSON.parse(text))
  } catch {
    return null
  }
}

/** Tokens a finished answer used, for quota ledgers; null when it did not say. */
export function usageTokens(usage: Usage | null | undefined): number | null {
  if (!usage) return null
  if (usage.total_tokens !== undefined) return usage.total_tokens
  if (usage.prompt_tokens === undefined && usage.completion_tokens === undefined) return null
  return (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)
}

/** Prompt tokens served from the prefix cache; null when the answer did not say. */
export function reportedCachedTokens(usage: Usage): number | null {
  return usage.prompt_tokens_details?.cached_tokens ?? null
}

/**
 * `usage` with prompt_tokens_details.cached_tokens always there, 0 when the upstream left
 * it out (vLLM without --enable-prompt-tokens-details, or older releases' count of 0):
 * what OpenAI and the Bedrock mapping always send, so a client reads it the same way
 * whichever backend answered. Other fields are kept as they came.
 */
export function withCachedTokens(usage: Record<string, unknown>): Record<string, unknown> {
  const details = usage.prompt_tokens_details
  const kept = typeof details === 'object' && details !== null ? details : {}
  const cached = (kept as { cached_tokens?: unknown }).cached_tokens
  if (typeof cached === 'number') return usage
  return { ...usage, prompt_tokens_details: { ...kept, cached_tokens: 0 } }
}

/**
 * A JSON answer or stream chunk's text with its usage held to withCachedTokens; the text
 * unchanged when it carries no usage, already has the count, or does not parse.
 */
export function withCachedTokensJson(json: string): string {
  if (!mayCarryUsage(json)) return json
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return json
  }
  if (typeof value !== 'object' || value === null) return json
  const usage = (value as { usage?: unknown }).usage
  if (typeof usage !== 'object' || usage === null) return json
  const fixed = withCachedTokens(usage as Record<string, unknown>)
  return fixed === usage ? json : JSON.stringify({ ...value, usage: fixed })
}
