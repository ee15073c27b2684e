import { Usage } from './usage.ts'

/** The usage a stream has reported so far: what it said, and the same read as counts. */
export type UsageSoFar = { usage: Usage; raw: Record<string, unknown> } | { problem: string } | null

export interface RunningUsage {
  /**
   * Takes a chunk's usage, with the chunk's choices (already checked: each an object with
   * an index below the cap), so a per-choice count is known for which choice it is.
   */
  take(usage: Record<string, unknown>, choices: readonly Record<string, unknown>[]): void
  /** The usage as of the last chunk taken; null before any came. */
  current(): UsageSoFar
}

/**
 * The tokens a stream has used, as its usage says, at any point: what the edge charges
 * when the stream stops before its end. vLLM's continuous usage stats put on each chunk
 * the prompt and that chunk's choice's tokens so far, and the final usage-only chunk the
 * total over all choices; before that chunk, with n > 1, the sum of each choice's latest
 * count is the total. Reading the counts (zod) is left to current(): it is not per chunk.
 */
export function createRunningUsage(): RunningUsage {
  let last: Record<string, unknown> | null = null
  let isTotal = false
  const byChoice: number[] = []
  return {
    take(usage, choices) {
      last = usage
      isTotal = choices.length === 0
      const [only] = choices
      const completion = usage.completion_tokens
      if (choices.length === 1 && typeof completion === 'number') {
        byChoice[only?.index as number] = completion
      }
    },
    current() {
      if (last === null) return null
      const parsed = Usage.safeParse(last)
      if (!parsed.success) return { problem: 'its usage is not token counts' }
      if (isTotal || byChoice.length <= 1) return { usage: parsed.data, raw: last }
      let completion = 0
      for (const tokens of byChoice) completion += tokens ?? 0
      const prompt = parsed.data.prompt_tokens ?? 0
      const summed = {
        prompt_tokens: prompt,
        total_tokens: prompt + completion,
        completion_tokens: completion,
      }
      return { usage: summed, raw: summed }
    },
  }
}
