import { parseOptions } from '../../../shared/config/parse-options.ts'
import type { PoolCondition, TokenCountExample } from '../../../shared/state/pool-state.ts'
import { type ConditionNow, PoolConditions } from '../pools/pool-conditions.ts'
import {
  TokenizationGuardOptions,
  type TokenizationGuardOptionsInput,
} from './tokenization-options.ts'

export type TokenCountKind = TokenCountExample['kind']
const kinds: readonly TokenCountKind[] = ['prompt', 'cached']

/** What one answered request says about the scorer's counts. */
export interface TokenCountObservation {
  requestId: string
  model: string
  pod: string
  /** The scorer's prompt ids counted; null when it only estimated them (no tokenizer). */
  scorerPromptTokens: number | null
  /** usage.prompt_tokens; null when the answer carried no usage. */
  reportedPromptTokens: number | null
  /** The index's prediction for the pod; null when the scorer did not believe its index there. */
  predictedCachedTokens: number | null
  /** usage.prompt_tokens_details.cached_tokens; null when unknown (absent, and not known to report). */
  reportedCachedTokens: number | null
  blockSize: number
  /** Wall time the answer ended. */
  atMs: number
}

export interface TokenCountComparison {
  kind: TokenCountKind
  agrees: boolean
}

/** Counts over a window, in buckets, so memory stays the same whatever the traffic. */
class BucketWindow {
  private readonly windowMs: number
  private readonly bucketMs: number
  private readonly buckets: { startMs: number; compared: number; disagreed: number }[] = []

  constructor(windowMs: number) {
    this.windowMs = windowMs
    this.bucketMs = Math.max(1, windowMs / 30)
  }

  add(atMs: number, agrees: boolean): void {
    const startMs = Math.floor(atMs / this.bucketMs) * this.bucketMs
    let bucket = this.buckets.at(-1)
    if (!bucket || bucket.startMs !== startMs) {
      bucket = { startMs, compared: 0, disagreed: 0 }
      this.buckets.push(bucket)
    }
    bucket.compared++
    if (!agrees) bucket.disagreed++
  }

  total(nowMs: number): { compared: number; disagreed: number } {
    const oldest = nowMs - this.windowMs
    while ((this.buckets[0]?.startMs ?? Number.POSITIVE_INFINITY) + this.bucketMs <= oldest)
      this.buckets.shift()
    let compared = 0
    let disagreed = 0
    for (const bucket of this.buckets) {
      compared += bucket.compared
      disagreed += bucket.disagreed
    }
    return { compared, disagreed }
  }
}

/**
 * The runtime guard of one pool: after each answered request, the scorer's prompt count is
 * compared with the pod's usage.prompt_tokens (they are equal when both tokenize alike),
 * and the cached tokens the index predicted with those the pod reported (equal within a
 * block unless an eviction or another request came between). Past a share of disagreeing
 * requests over a window (TokenizationGuardOptions), the pool's TokenizationAgrees
 * condition turns False with one request as an example; it turns True again once enough
 * requests in the window agree. With too few comparisons in the window it stays as it was.
 */
export class TokenizationGuard {
  private readonly options: TokenizationGuardOptions
  private readonly windows: Record<TokenCountKind, BucketWindow>
  private readonly examples: Record<TokenCountKind, TokenCountExample | null> = {
    prompt: null,
    cached: null,
  }
  private readonly conditions = new PoolConditions()

  constructor(input: TokenizationGuardOptionsInput = {}) {
    this.options = parseOptions(TokenizationGuardOptions, input, 'tokenization guard')
    this.windows = {
      prompt: new BucketWindow(this.options.windowMs),
      cached: new BucketWindow(this.options.windowMs),
    }
  }

  /** Compares what can be compared of one answer; says which counts agreed. */
  observe(observation: TokenCountObservation): TokenCountComparison[] {
    const compared: TokenCountComparison[] = []
    const {
      scorerPromptTokens: scorer,
      reportedPromptTokens: reported,
      predictedCachedTokens: predicted,
      reportedCachedTokens: cached,
    } = observation
    if (scorer !== null && reported !== null)
      compared.push(this.record(observation, 'prompt', scorer, reported, scorer === reported))
    if (predicted !== null && cached !== null) {
      const agrees = Math.abs(predicted - cached) < observation.blockSize
      compared.push(this.record(observation, 'cached', predicted, cached, agrees))
    }
    return compared
  }

  /** TokenizationAgrees as of `nowMs` (wall). */
  condition(nowMs: number): PoolCondition {
    const totals = Object.fromEntries(
      kinds.map((kind) => [kind, this.windows[kind].total(nowMs)]),
    ) as Record<TokenCountKind, { compared: number; disagreed: number }>
    const enough = kinds.filter((kind) => totals[kind].compared >= this.options.minObservations)
    const over = enough.find((kind) => {
      const { compared, disagreed } = totals[kind]
      return disagreed / compared > this.maxShare(kind)
    })
    const before = this.conditions.get('TokenizationAgrees')
    let now: ConditionNow
    if (over !== undefined) now = this.disagrees(over, totals[over])
    else if (enough.length > 0) now = this.agrees(enough, totals)
    else if (before) return before
    else
      now = {
        type: 'TokenizationAgrees',
        status: 'Unknown',
        reason: 'NotCompared',
        message: `no answer with usage compared in the last ${window(this.options.windowMs)}`,
        example: null,
      }
    return this.conditions.set(now, nowMs)
  }

  private record(
    observation: TokenCountObservation,
    kind: TokenCountKind,
    scorer: number,
    reported: number,
    agrees: boolean,
  ): TokenCountComparison {
    this.windows[kind].add(observation.atMs, agrees)
    if (!agrees) {
      const { requestId, model, pod, atMs } = observation
      this.examples[kind] = { kind, requestId, model, pod, scorer, reported, atMs }
    }
    return { kind, agrees }
  }

  private maxShare(kind: TokenCountKind): number {
    return kind === 'prompt'
      ? this.options.maxPromptDisagreement
      : this.options.maxCachedDisagreement
  }

  private disagrees(
    kind: TokenCountKind,
    total: { compared: number; disagreed: number },
  ): ConditionNow {
    const example = this.examples[kind]
    const share = `${total.disagreed} of ${total.compared} answered requests in the last ${window(this.options.windowMs)} (more than ${percent(this.maxShare(kind))})`
    const what =
      kind === 'prompt'
        ? `the pods' usage.prompt_tokens differed from the scorer's count for ${share}`
        : `the pods' cached_tokens differed by a block or more from the index's prediction for ${share}`
    const instance =
      example === null
        ? ''
        : kind === 'prompt'
          ? `; e.g. request ${example.requestId} (model ${example.model}) on pod ${example.pod}: the scorer counted ${example.scorer} prompt tokens, the pod ${example.reported}`
          : `; e.g. request ${example.requestId} (model ${example.model}) on pod ${example.pod}: the scorer predicted ${example.scorer} cached tokens, the pod reported ${example.reported}`
    return {
      type: 'TokenizationAgrees',
      status: 'False',
      reason: kind === 'prompt' ? 'PromptTokensDisagree' : 'CachedTokensDisagree',
      message: what + instance,
      example,
    }
  }

  private agrees(
    enough: readonly TokenCountKind[],
    totals: Record<TokenCountKind, { compared: number; disagreed: number }>,
  ): ConditionNow {
    const parts = enough.map((kind) => {
      const { compared, disagreed } = totals[kind]
      const field = kind === 'prompt' ? 'prompt_tokens' : 'cached_tokens'
      return `${field} agreed on ${compared - disagreed} of ${compared}`
    })
    return {
      type: 'TokenizationAgrees',
      status: 'True',
      reason: 'CountsAgree',
      message: `${parts.join('; ')} answered requests in the last ${window(this.options.windowMs)}`,
      example: null,
    }
  }
}

function window(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`
  if (ms % 60_000 === 0) return `${ms / 60_000}m`
  if (ms % 1_000 === 0) return `${ms / 1_000}s`
  return `${ms}ms`
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`
}
