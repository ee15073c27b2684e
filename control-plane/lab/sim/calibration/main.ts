import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { h200x32bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import { checkProfileShape } from './check-profile-shape.ts'
import { fitCostModel, loadCalibration } from './fit-cost-model.ts'

/**
 * Prints how well the simulator's step-time function fits the real-GPU measurements in
 * data/calibration, and the effective rates the fit implies (npm run sim:calibration).
 */
const { values } = parseArgs({
  options: {
    // Found from this file, so the command works from any working directory.
    dir: {
      type: 'string',
      default: fileURLToPath(new URL('../../../../data/calibration', import.meta.url)),
    },
  },
})
const h200 = {
  bandwidth: h200x32bFp8.gpu.memoryBandwidth,
  bf16: h200x32bFp8.gpu.attentionPeakFlops,
}
const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const fitted = (await loadCalibration(values.dir)).map((model) => ({
  model,
  fit: fitCostModel(model),
}))
for (const { model, fit } of fitted) {
  process.stdout.write(
    `${model.name}: R² ${fit.r2.toFixed(4)}, max |residual| ${pct(fit.maxRelativeResidual)} over ${model.points.length} points\n` +
      `  fixed overhead ${fit.fixedOverheadMs.toFixed(2)} ms; bandwidth ${(fit.bandwidth / 1e12).toFixed(2)} TB/s (${pct(fit.bandwidth / h200.bandwidth)} of H200 peak); ` +
      `linear ${(fit.linearFlops / 1e12).toFixed(0)} TFLOP/s (${pct(fit.linearFlops / h200.bf16)} of BF16 peak); ` +
      `attention ${(fit.attentionFlops / 1e12).toFixed(0)} TFLOP/s (${pct(fit.attentionFlops / h200.bf16)} of BF16 peak)\n`,
  )
  for (const r of fit.residuals) {
    process.stdout.write(
      `    ${r.label.padEnd(24)} measured ${r.measuredMs.toFixed(1).padStart(7)} ms  model ${r.modelMs.toFixed(1).padStart(7)} ms\n`,
    )
  }
}
const check = checkProfileShape(h200x32bFp8, fitted, 'qwen3-32b-shape')
process.stdout.write(
  `${h200x32bFp8.name} in BF16 against qwen3-32b-shape: R² ${check.bf16.r2.toFixed(4)}, max |residual| ${pct(check.bf16.maxRelativeResidual)}\n` +
    check.efficiencies
      .map(
        (e) =>
          `  ${e.name} ${e.profile} (fitted ${e.fittedMin.toFixed(3)}–${e.fittedMax.toFixed(3)})\n`,
      )
      .join(''),
)
