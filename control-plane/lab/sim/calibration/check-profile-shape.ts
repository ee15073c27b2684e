import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import type { GpuProfile } from '../../../../shared/gpu/gpu-profile.ts'
import {
  type CalibrationComparison,
  type CalibrationModel,
  compareWithCalibration,
  type FittedCostModel,
  profileForRates,
} from './fit-cost-model.ts'

type EfficiencyName = 'memoryBandwidth' | 'linear' | 'attention'

export interface EfficiencyRange {
  name: EfficiencyName
  profile: number
  /** The smallest and largest fraction of the BF16 peak the fits found, across models. */
  fittedMin: number
  fittedMax: number
}

/** A calibration model with the fit `fitCostModel` found for it. */
export interface FittedCalibration {
  model: CalibrationModel
  fit: FittedCostModel
}

export interface ProfileShapeCheck {
  efficiencies: EfficiencyRange[]
  /** The profile's step-time function in BF16 against the measured points of `modelName`. */
  bf16: CalibrationComparison
}

/**
 * Checks an FP8 profile of the calibration's own GPU (another GPU is refused) against its BF16 measurements
 * without pretending they are FP8: (1) each efficiency of the profile against the range
 * the fits found, as fractions of the BF16 peaks (the profile's attention peak is the
 * BF16 dense peak); (2) the profile's BF16 twin (the calibration model's BF16 weights
 * and KV, the profile's efficiencies applied to the BF16 peak and bandwidth) against the
 * measured points. The twin takes the fit's fixed overhead, since that is HF's per-step
 * Python and not the vLLM overhead the profile models.
 */
export function checkProfileShape(
  profile: GpuProfile,
  fitted: readonly FittedCalibration[],
  modelName: string,
): ProfileShapeCheck {
  const own = fitted.find((f) => f.model.name === modelName)
  if (own === undefined)
    throw new KinfError('not_found', `no calibration model ${modelName} to check ${profile.name}`)
  if (own.model.gpu !== profile.gpu.name)
    throw new KinfError(
      'invalid_config',
      `${profile.name} is a profile of the ${profile.gpu.name}; ${modelName} was measured on the ${own.model.gpu}`,
    )
  const bf16Peak = profile.gpu.attentionPeakFlops
  const fractions: Record<EfficiencyName, (f: FittedCostModel) => number> = {
    memoryBandwidth: (f) => f.bandwidth / profile.gpu.memoryBandwidth,
    linear: (f) => f.linearFlops / bf16Peak,
    attention: (f) => f.attentionFlops / bf16Peak,
  }
  const efficiencies = (Object.keys(fractions) as EfficiencyName[]).map((name) => {
    const found = fitted.map((f) => fractions[name](f.fit))
    return {
      name,
      profile: profile.efficiency[name],
      fittedMin: Math.min(...found),
      fittedMax: Math.max(...found),
    }
  })
  const { efficiency } = profile
  const twin = profileForRates(own.model.geometry, {
    fixedOverheadMs: own.fit.fixedOverheadMs,
    bandwidth: profile.gpu.memoryBandwidth * efficiency.memoryBandwidth,
    linearFlops: bf16Peak * efficiency.linear,
    attentionFlops: bf16Peak * efficiency.attention,
  })
  return { efficiencies, bf16: compareWithCalibration(own.model, twin) }
}
