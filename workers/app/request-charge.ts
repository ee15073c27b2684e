import { type Usage, usageTokens } from '../../shared/openai/usage.ts'
import type { MeteredStream } from './usage-tap.ts'

/** How an upstream's answer to a request ended, as far as the edge saw: what the ledger charges. */
export type UpstreamOutcome =
  /** Answered in full; `usage` null when the answer carried none. */
  | { kind: 'answered'; usage: Usage | null }
  /**
   * Stopped before its end (the client left, the upstream broke, a limit cut it): what the
   * stream showed until then, or null for a JSON answer that broke.
   */
  | { kind: 'cut'; metered: MeteredStream | null }
  /** The upstream refused it (an error status): nothing was generated. */
  | { kind: 'refused' }
  /** The client left before any answer came: the prompt was read, or was being read. */
  | { kind: 'unanswered' }

/** What a request was admitted on, and the exact prompt when a tokenizer counted it. */
export interface ChargeBasis {
  /** The exact prompt (the scorer's count) or else the edge's estimate. */
  promptTokens: number
  /** The output the request was admitted for (sequences × max_tokens). */
  reservedOutput: number
}

/**
 * Tokens a vLLM pool used for a request, by how its answer ended. A whole answer: its
 * usage (or, without one, the prompt and what was reserved for output). A cut stream: the
 * running usage vLLM puts on every chunk (continuous_usage_stats), or else the prompt and
 * one token per event with text. A JSON answer that broke half-way: what was reserved,
 * since the pod likely generated it all. Refused: nothing. Left before the answer: the prompt.
 */
export function localCharge(outcome: UpstreamOutcome, basis: ChargeBasis): number {
  const whole = basis.promptTokens + basis.reservedOutput
  switch (outcome.kind) {
    case 'answered':
      return usageTokens(outcome.usage) ?? whole
    case 'cut': {
      const { metered } = outcome
      if (metered === null) return whole
      return usageTokens(metered.usage) ?? basis.promptTokens + metered.textEvents
    }
    case 'refused':
      return 0
    case 'unanswered':
      return basis.promptTokens
  }
}
