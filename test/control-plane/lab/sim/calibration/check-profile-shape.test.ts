import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  checkProfileShape,
  type FittedCalibration,
} from '../../../../../control-plane/lab/sim/calibration/check-profile-shape.ts'
import {
  compareWithCalibration,
  fitCostModel,
  loadCalibration,
} from '../../../../../control-plane/lab/sim/calibration/fit-cost-model.ts'
import { h200x32bFp8, l40s27bFp8 } from '../../../../../shared/gpu/gpu-profile.ts'

const calibrationDir = fileURLToPath(new URL('../../../../../data/calibration', import.meta.url))

describe('h200-32b-fp8 against the H200 measurements of a 32B shape in BF16', () => {
  let fitted: FittedCalibration[]
  beforeAll(async () => {
    fitted = (await loadCalibration(calibrationDir)).map((model) => ({
      model,
      fit: fitCostModel(model),
    }))
  })
  const own = () => fitted.find((f) => f.model.name === 'qwen3-32b-shape') as FittedCalibration

  it('models the GPU and the geometry that were measured', () => {
    const { model } = own()
    expect(model.gpu).toBe(h200x32bFp8.gpu.name)
    const g = model.geometry
    const m = h200x32bFp8.model
    expect([m.layers, m.attentionWidth, m.kvHeads, m.headDim]).toEqual([g.L, g.H * g.D, g.KVH, g.D])
    expect(m.parameters).toBe(g.P_body)
    // The same weights in FP8, except the lm_head, which stays in BF16.
    expect(m.weightBytes).toBe(g.weight_bytes_read / 2 + g.P_head)
    expect(g.kv_bytes_per_token).toBe(2 * 131_072)
  })

  it('has efficiencies inside the ranges the fits found', () => {
    const check = checkProfileShape(h200x32bFp8, fitted, 'qwen3-32b-shape')
    expect(check.efficiencies.map((e) => e.name)).toEqual([
      'memoryBandwidth',
      'linear',
      'attention',
    ])
    for (const e of check.efficiencies) {
      expect(e.profile).toBeGreaterThanOrEqual(e.fittedMin)
      expect(e.profile).toBeLessThanOrEqual(e.fittedMax)
    }
  })

  it('predicts every measured prefill and decode point within 10% when run in BF16', () => {
    const { bf16 } = checkProfileShape(h200x32bFp8, fitted, 'qwen3-32b-shape')
    expect(bf16.residuals).toHaveLength(23)
    expect(bf16.maxRelativeResidual).toBeLessThan(0.1)
    expect(bf16.r2).toBeGreaterThan(0.99)
  })

  it('would not fit the BF16 points as the FP8 profile itself: the check is about the twin', () => {
    const asFp8 = compareWithCalibration(own().model, {
      ...h200x32bFp8,
      efficiency: { ...h200x32bFp8.efficiency, fixedOverheadMs: own().fit.fixedOverheadMs },
    })
    expect(asFp8.maxRelativeResidual).toBeGreaterThan(0.25)
  })

  it("puts an L40S-style attention efficiency outside the range this GPU's fits found", () => {
    const fa2OnAda = { ...h200x32bFp8.efficiency, attention: l40s27bFp8.efficiency.attention }
    const check = checkProfileShape(
      { ...h200x32bFp8, efficiency: fa2OnAda },
      fitted,
      'qwen3-32b-shape',
    )
    const attention = check.efficiencies.find((e) => e.name === 'attention')
    expect(attention?.profile).toBeGreaterThan(attention?.fittedMax ?? 1)
  })

  it('refuses a profile of another GPU, whose peaks the fits are no fraction of', () => {
    expect(() => checkProfileShape(l40s27bFp8, fitted, 'qwen3-32b-shape')).toThrow(/NVIDIA L40S/)
  })

  it('names a missing calibration model', () => {
    expect(() => checkProfileShape(h200x32bFp8, fitted, 'qwen3-70b-shape')).toThrow(
      /qwen3-70b-shape/,
    )
  })
})
