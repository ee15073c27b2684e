import { describe, expect, it } from 'vitest'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { OnlineLinearFit } from '../../../shared/routing/online-linear-fit.ts'

/** A fit on the decode step's scale: tens of ms, slopes of 1e-4 ms per token of 1e5. */
const newFit = (forgettingFactor = 0.98) =>
  new OnlineLinearFit({
    prior: { intercept: 40, slope: 2e-4 },
    forgettingFactor,
    priorWeight: 2,
    featureScale: 100_000,
  })

describe('OnlineLinearFit', () => {
  it('converges from a wrong prior to the line the noisy data follow', () => {
    const random = createSeededRandom(7)
    const line = newFit()
    // Twice the intercept and three times the slope of the prior, ±10 ms of noise.
    for (let i = 0; i < 600; i++) {
      const x = random() * 300_000
      line.observe(x, 80 + 6e-4 * x + (random() - 0.5) * 20)
    }
    expect(line.model.intercept).toBeGreaterThan(75)
    expect(line.model.intercept).toBeLessThan(85)
    expect(Math.abs(line.model.slope / 6e-4 - 1)).toBeLessThan(0.03)
    expect(line.predict(150_000)).toBeCloseTo(80 + 90, -1)
    expect(line.observations).toBe(600)
  })

  it('forgets: follows the line when it changes', () => {
    const random = createSeededRandom(8)
    const line = newFit(0.95)
    for (let i = 0; i < 300; i++) {
      const x = 20_000 + random() * 200_000
      line.observe(x, 40 + 2e-4 * x)
    }
    expect(line.model.slope).toBeCloseTo(2e-4, 6)
    for (let i = 0; i < 300; i++) {
      const x = 20_000 + random() * 200_000
      line.observe(x, 60 + 5e-4 * x)
    }
    expect(line.model.intercept).toBeCloseTo(60, 0)
    expect(line.model.slope).toBeCloseTo(5e-4, 6)
  })

  it('without forgetting, averages the two lines instead', () => {
    const random = createSeededRandom(8)
    const line = newFit(1)
    for (let i = 0; i < 600; i++) {
      const x = 20_000 + random() * 200_000
      line.observe(x, i < 300 ? 40 + 2e-4 * x : 60 + 5e-4 * x)
    }
    expect(line.model.slope).toBeLessThan(4.5e-4)
  })

  it('keeps its parameters within a factor of 50 of the prior, whatever it is told', () => {
    /** The lowest and highest each parameter went from the prior, told `y` whatever x. */
    const extremes = (y: number) => {
      const line = newFit(0.9)
      const seen = { intercept: [40, 40], slope: [2e-4, 2e-4] }
      for (let i = 0; i < 200; i++) {
        line.observe(100_000 * (1 + (i % 3)), y)
        for (const key of ['intercept', 'slope'] as const) {
          const range = seen[key] as number[]
          range[0] = Math.min(range[0] as number, line.model[key])
          range[1] = Math.max(range[1] as number, line.model[key])
        }
      }
      return seen
    }
    // Each bound is reached and held.
    expect(extremes(1e9)).toMatchObject({ intercept: [40, 40 * 50], slope: [2e-4, 2e-4 * 50] })
    expect(extremes(0)).toMatchObject({ intercept: [0, 40], slope: [2e-4 / 50, 2e-4] })
  })

  it('moves one outlier no further than a large ordinary error would', () => {
    const once = (y: number) => {
      const line = newFit()
      line.observe(100_000, y)
      return line.model.intercept
    }
    // Predicted 60 at 1e5: errors beyond max(prior intercept, half the prediction) = 40 clamp.
    expect(once(100 + 1e6)).toBe(once(100))
    expect(once(90)).toBeLessThan(once(100))
  })

  it('ignores negative and non-finite observations, and takes a restored line as is', () => {
    const line = newFit()
    line.observe(Number.NaN, 50)
    line.observe(1000, Number.POSITIVE_INFINITY)
    line.observe(-1, 50)
    line.observe(1000, -5)
    expect(line.model).toEqual({ intercept: 40, slope: 2e-4 })
    expect(line.observations).toBe(0)
    line.restore({ intercept: 55, slope: 3e-4 }, 12)
    expect(line.model).toEqual({ intercept: 55, slope: 3e-4 })
    expect(line.observations).toBe(12)
    expect(line.predict(100_000)).toBeCloseTo(85, 9)
  })
})
