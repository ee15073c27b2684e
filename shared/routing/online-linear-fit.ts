/** A line y ≈ intercept + slope × x. */
export interface LinearModel {
  intercept: number
  slope: number
}

/** How an OnlineLinearFit starts and forgets (validated by the model that owns it). */
export interface OnlineLinearFitOptions {
  /** The line before any observation, and what the parameters are kept near (×/÷ 50). */
  prior: LinearModel
  /** Recursive-least-squares forgetting factor, (0.5, 1]. */
  forgettingFactor: number
  /** How much the prior is trusted, in equivalent observations (> 0). */
  priorWeight: number
  /** A typical magnitude of x, so that intercept and slope move at a similar pace. */
  featureScale: number
}

/**
 * y ≈ intercept + slope × x, re-fitted online by recursive least squares with exponential
 * forgetting, from a prior trusted as `priorWeight` observations. A burst of outliers
 * cannot produce a negative or absurd line: each error counts at most as much as a large
 * ordinary one (Huber), and the parameters stay within a factor of 50 of the prior's.
 * Shared by the TTFT model and the decode step cost (ttft-model.ts, online-step-cost.ts).
 */
export class OnlineLinearFit {
  private intercept: number
  private slope: number
  // Inverse-information matrix P (symmetric 2×2) of the estimate.
  private p00: number
  private p01: number
  private p11: number
  private readonly lambda: number
  private readonly prior: LinearModel
  private readonly pMax: readonly [number, number]
  observations = 0

  constructor(options: OnlineLinearFitOptions) {
    this.prior = options.prior
    this.lambda = options.forgettingFactor
    this.intercept = options.prior.intercept
    this.slope = options.prior.slope
    const weight = options.priorWeight
    const scale = options.featureScale
    // Scale P to the features' magnitudes so both parameters move at a similar pace.
    this.p00 = 1 / weight
    this.p01 = 0
    this.p11 = 1 / (weight * scale * scale)
    this.pMax = [this.p00, this.p11]
  }

  get model(): LinearModel {
    return { intercept: this.intercept, slope: this.slope }
  }

  /** A line another fit arrived at (an inspector replaying a replica's view). */
  restore(model: LinearModel, observations: number): void {
    this.intercept = model.intercept
    this.slope = model.slope
    this.observations = observations
  }

  predict(x: number): number {
    return this.intercept + this.slope * x
  }

  /** One observation; a negative or non-finite one is ignored. */
  observe(x: number, y: number): void {
    if (!Number.isFinite(x) || !Number.isFinite(y) || x < 0 || y < 0) return
    const x0 = 1
    const x1 = x
    const px0 = this.p00 * x0 + this.p01 * x1
    const px1 = this.p01 * x0 + this.p11 * x1
    const denominator = this.lambda + x0 * px0 + x1 * px1
    const k0 = px0 / denominator
    const k1 = px1 / denominator
    // Huber-style: an outlier (a preemption, a stall the features cannot see) moves the
    // fit as much as a large ordinary error, no more.
    const predicted = this.predict(x)
    const limit = Math.max(this.prior.intercept, predicted * 0.5)
    const error = clamp(y - predicted, -limit, limit)
    this.intercept = clamp(this.intercept + k0 * error, 0, Math.max(1, this.prior.intercept) * 50)
    this.slope = clamp(this.slope + k1 * error, this.prior.slope / 50, this.prior.slope * 50)
    // P ← (P − k·xᵀP) / λ, kept symmetric.
    const n00 = (this.p00 - k0 * px0) / this.lambda
    const n01 = (this.p01 - k0 * px1) / this.lambda
    const n11 = (this.p11 - k1 * px1) / this.lambda
    // Forgetting inflates P along directions the data does not excite (a pod that always
    // sees similar work); capping it at the prior's level bounds how fast the fit can run.
    const scale = Math.min(1, (this.pMax[0] as number) / n00, (this.pMax[1] as number) / n11)
    this.p00 = n00 * scale
    this.p01 = n01 * scale
    this.p11 = n11 * scale
    this.observations++
  }
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value))
}
