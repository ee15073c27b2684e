import { OnlineLinearFit } from './online-linear-fit.ts'
import type { StepCost } from './routing-strategy.ts'

/**
 * Context tokens a pod's batch typically holds: tens of requests of a few thousand tokens.
 * The fit's slope moves at the intercept's pace around this magnitude.
 */
const contextScale = 100_000

/**
 * A pool's decode step, time per output token ≈ decodeStepMs + msPerContextToken × the
 * context its batch holds, re-fitted online from the requests this replica sees decode
 * (an OnlineLinearFit, from the GPU profile's step cost as prior). Like the TTFT model,
 * one per pool: its pods share a GPU profile. Whatever a step does besides decoding (the
 * prefill chunks it carries, preemptions) is part of what the requests waited, so it is
 * fitted too.
 */
export class OnlineStepCost {
  private readonly fit: OnlineLinearFit

  constructor(options: { prior: StepCost; forgettingFactor: number; priorWeight?: number }) {
    this.fit = new OnlineLinearFit({
      prior: { intercept: options.prior.decodeStepMs, slope: options.prior.msPerContextToken },
      forgettingFactor: options.forgettingFactor,
      priorWeight: options.priorWeight ?? 2,
      featureScale: contextScale,
    })
  }

  get observations(): number {
    return this.fit.observations
  }

  get stepCost(): StepCost {
    const { intercept, slope } = this.fit.model
    return { decodeStepMs: intercept, msPerContextToken: slope }
  }

  /** The fitted step cost and how many requests it was fitted from (PodReport). */
  get report(): StepCost & { observations: number } {
    return { ...this.stepCost, observations: this.observations }
  }

  /** One request's decode: its mean time per output token over the mean context held. */
  observe({ meanContextTokens, tpotMs }: DecodeObservation): void {
    this.fit.observe(meanContextTokens, tpotMs)
  }
}

/** A request's time per output token and the mean context its pod held meanwhile. */
export interface DecodeObservation {
  meanContextTokens: number
  tpotMs: number
}

/** A request's decode as seen from its pod: enough to observe its time per output token. */
export interface DecodeSpan {
  firstTokenAtMs: number | null
  /** The pod's context integral (token·ms) when its first token went by. */
  contextIntegralAtFirstToken: number
  generated: number
}

/**
 * The observation a request that ended at `endMs`, with the pod's context integral then
 * at `integralNow`, gives: its time per output token, (end − first token) / (tokens − 1),
 * and the mean context the pod held meanwhile. Null with fewer than two tokens (no step
 * between them) or anything non-finite.
 */
export function decodeObservation(
  span: DecodeSpan,
  endMs: number,
  integralNow: number,
): DecodeObservation | null {
  if (span.firstTokenAtMs === null || span.generated < 2) return null
  const elapsedMs = endMs - span.firstTokenAtMs
  const tpotMs = elapsedMs / (span.generated - 1)
  const meanContextTokens = (integralNow - span.contextIntegralAtFirstToken) / elapsedMs
  if (!(elapsedMs > 0) || !Number.isFinite(tpotMs) || !Number.isFinite(meanContextTokens))
    return null
  return { meanContextTokens, tpotMs }
}
