import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  fitCostModel,
  loadCalibration,
} from '../../../../../control-plane/lab/sim/calibration/fit-cost-model.ts'

const calibrationDir = fileURLToPath(new URL('../../../../../data/calibration', import.meta.url))

describe('the step-time model against real-GPU measurements (data/calibration)', async () => {
  const models = await loadCalibration(calibrationDir)

  it('has both model shapes with prefill and decode points', () => {
    expect(models.map((m) => m.name).sort()).toEqual(['qwen3-32b-shape', 'qwen3-8b-shape'])
    for (const model of models) expect(model.points.length).toBe(23)
  })

  it.each(models.map((m) => [m.name, m] as const))(
    '%s: the functional form explains prefill(c, u) and decode(B, ctx)',
    (_name, model) => {
      const fit = fitCostModel(model)
      expect(fit.r2).toBeGreaterThan(0.99)
      expect(fit.maxRelativeResidual).toBeLessThan(0.15)
      // Cached tokens are not free: the fitted model keeps the measured cost of a long prefix.
      const at = (label: string) => fit.residuals.find((r) => r.label === label)?.modelMs ?? 0
      expect(at('prefill c=8192 u=2048') / at('prefill c=0 u=2048')).toBeGreaterThan(1.3)
    },
  )

  it('does not fit data of a different shape (the test can fail)', () => {
    const model = models[0]
    if (!model) throw new Error('no calibration model')
    // Decode time falling with batch size is something no roofline can produce.
    const scrambled = {
      ...model,
      points: model.points.map((p) =>
        p.label.startsWith('decode') ? { ...p, ms: 200 / p.shape.tokens } : p,
      ),
    }
    expect(fitCostModel(scrambled).maxRelativeResidual).toBeGreaterThan(0.3)
  })
})
