/**
 * What the chat and the completions builders share: each one gathers the streamed choices
 * of one index and builds the choice of the non-streamed answer from them.
 */
export interface ChoiceBuilder {
  /** Takes one streamed choice of its index; a problem in words when it is not of vLLM's shape. */
  add(choice: Record<string, unknown>): string | null
  /** The choice of the non-streamed answer, or why the stream did not carry a whole one. */
  build(): { choice: Record<string, unknown> } | { problem: string }
}

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Appends one item at a time: spreading a long array into push() overflows the stack. */
export function pushAll(target: unknown[], items: readonly unknown[]): void {
  for (const item of items) target.push(item)
}

/**
 * An optional array field of a streamed choice, appended to what came before it (vLLM's
 * token_ids and logprob lists hold the chunk's tokens only); null for a field that never
 * came. `at` names the field in the problem.
 */
export function appendArray(
  parts: unknown[] | null,
  value: unknown,
  at: string,
): { parts: unknown[] | null } | { problem: string } {
  if (value === undefined || value === null) return { parts }
  if (!Array.isArray(value)) return { problem: `${at} is not an array` }
  const into = parts ?? []
  pushAll(into, value)
  return { parts: into }
}

/** How a choice ended, as its finishing chunk says. */
export interface ChoiceEnd {
  finishReason: string | null
  /** vLLM's stop_reason: the stop string or token id that ended it, else null. */
  stopReason: number | string | null
}

/**
 * Reads finish_reason and stop_reason. vLLM sends stop_reason on the chunk that finishes
 * the choice (and null on the others), so it is kept from that chunk only.
 */
export function readEnd(end: ChoiceEnd, choice: Record<string, unknown>): string | null {
  const finish = choice.finish_reason
  if (finish === undefined || finish === null) return null
  if (typeof finish !== 'string') return 'finish_reason is not a string'
  const stop = choice.stop_reason ?? null
  if (stop !== null && typeof stop !== 'string' && typeof stop !== 'number') {
    return 'stop_reason is not a string, a number or null'
  }
  end.finishReason = finish
  end.stopReason = stop
  return null
}

/** A piece of text (content, reasoning, text) of a streamed choice; null when absent. */
export function textPiece(
  value: unknown,
  at: string,
): { piece: string | null } | { problem: string } {
  if (value === undefined || value === null) return { piece: null }
  if (typeof value !== 'string') return { problem: `${at} is not a string` }
  return { piece: value }
}
