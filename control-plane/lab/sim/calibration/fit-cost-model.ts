import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import type { GpuProfile } from '../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel, type StepShape } from '../../../../shared/gpu/step-cost-model.ts'

/** Model geometry as data/calibration/summary.json records it. */
const Geometry = z.looseObject({
  P_body: z.number(),
  P_head: z.number(),
  L: z.number(),
  H: z.number(),
  KVH: z.number(),
  D: z.number(),
  weight_bytes_read: z.number(),
  kv_bytes_per_token: z.number(),
})
export type Geometry = z.infer<typeof Geometry>
const Summary = z.looseObject({
  env: z.looseObject({ gpu: z.string() }),
  models: z.record(z.string(), z.looseObject({ geometry: Geometry })),
})

export interface CalibrationPoint {
  label: string
  shape: StepShape
  ms: number
}

export interface CalibrationModel {
  name: string
  /** The GPU it was measured on, as the run recorded it. */
  gpu: string
  geometry: Geometry
  points: CalibrationPoint[]
}

/** Reads the real-GPU prefill and decode timings of data/calibration. */
export async function loadCalibration(dir: string): Promise<CalibrationModel[]> {
  const summary = Summary.parse(JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')))
  const rows = async (file: string) =>
    (await readFile(join(dir, file), 'utf8'))
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(','))
  const prefill = await rows('prefill.csv')
  const decode = await rows('decode.csv')
  return Object.entries(summary.models).map(([name, { geometry }]) => ({
    name,
    gpu: summary.env.gpu,
    geometry,
    points: [
      ...prefill
        .filter(([model]) => model === name)
        .map(([, c, u, ms]) => {
          const [cached, fresh] = [Number(c), Number(u)]
          return {
            label: `prefill c=${cached} u=${fresh}`,
            shape: {
              tokens: fresh,
              decodeContext: 0,
              prefillContext: cached + fresh,
              prefillAttention: fresh * (cached + fresh / 2),
            },
            ms: Number(ms),
          }
        }),
      ...decode
        .filter(([model]) => model === name)
        .map(([, b, ctx, ms]) => {
          const [batch, context] = [Number(b), Number(ctx)]
          return {
            label: `decode B=${batch} ctx=${context}`,
            shape: {
              tokens: batch,
              decodeContext: batch * (context + 1),
              prefillContext: 0,
              prefillAttention: 0,
            },
            ms: Number(ms),
          }
        }),
    ],
  }))
}

/** Effective rates of the step-time function: ms, bytes/s and FLOP/s. */
export interface EffectiveRates {
  fixedOverheadMs: number
  bandwidth: number
  linearFlops: number
  attentionFlops: number
}

/** How a step-time function's predictions compare with the measured points. */
export interface CalibrationComparison {
  r2: number
  maxRelativeResidual: number
  residuals: { label: string; measuredMs: number; modelMs: number }[]
}

export interface FittedCostModel extends EffectiveRates, CalibrationComparison {}

/** A profile whose peaks are the given effective rates (efficiencies 1), for this geometry. */
export function profileForRates(geometry: Geometry, rates: EffectiveRates): GpuProfile {
  return {
    name: 'calibration',
    gpu: {
      name: 'fit',
      memoryBandwidth: rates.bandwidth,
      linearPeakFlops: rates.linearFlops,
      attentionPeakFlops: rates.attentionFlops,
    },
    model: {
      name: 'fit',
      parameters: geometry.P_body,
      weightBytes: geometry.weight_bytes_read,
      layers: geometry.L,
      attentionWidth: geometry.H * geometry.D,
      kvHeads: geometry.KVH,
      headDim: geometry.D,
      kvBytesPerElement: geometry.kv_bytes_per_token / (2 * geometry.L * geometry.KVH * geometry.D),
      maxModelLen: 32_768,
    },
    efficiency: {
      memoryBandwidth: 1,
      linear: 1,
      attention: 1,
      fixedOverheadMs: rates.fixedOverheadMs,
    },
    kvCacheBytes: 1,
    blockSize: 16,
    scheduler: { maxNumBatchedTokens: 8192, maxNumSeqs: 256 },
    jitter: 0,
  }
}

const ratesOf = (params: readonly number[]): EffectiveRates => {
  const [fixedOverheadMs, bandwidth, linearFlops, attentionFlops] = params.map((p) =>
    Math.exp(p),
  ) as [number, number, number, number]
  return { fixedOverheadMs, bandwidth, linearFlops, attentionFlops }
}

/** The profile's step times for the measured shapes, against the measurements. */
export function compareWithCalibration(
  model: CalibrationModel,
  profile: GpuProfile,
): CalibrationComparison {
  const cost = createStepCostModel(profile)
  const predicted = model.points.map((point) => cost.stepMs(point.shape))
  const measured = model.points.map((p) => p.ms)
  const mean = measured.reduce((a, b) => a + b, 0) / measured.length
  const ssRes = measured.reduce((sum, ms, i) => sum + (ms - (predicted[i] ?? 0)) ** 2, 0)
  const ssTot = measured.reduce((sum, ms) => sum + (ms - mean) ** 2, 0)
  return {
    r2: 1 - ssRes / ssTot,
    maxRelativeResidual: Math.max(
      ...measured.map((ms, i) => Math.abs((predicted[i] ?? 0) / ms - 1)),
    ),
    residuals: model.points.map((point, i) => ({
      label: point.label,
      measuredMs: point.ms,
      modelMs: predicted[i] ?? 0,
    })),
  }
}

/**
 * Fits the simulator's own step-time function (not a separate formula) to measured
 * points: four free rates (fixed overhead, bandwidth, linear and attention FLOP/s),
 * least squares on relative error, by Nelder–Mead over their logarithms.
 */
export function fitCostModel(model: CalibrationModel): FittedCostModel {
  const loss = (params: readonly number[]) => {
    const cost = createStepCostModel(profileForRates(model.geometry, ratesOf(params)))
    return model.points.reduce(
      (sum, point) => sum + (cost.stepMs(point.shape) / point.ms - 1) ** 2,
      0,
    )
  }
  const start = [Math.log(5), Math.log(2e12), Math.log(5e14), Math.log(3e14)]
  const rates = ratesOf(nelderMead(loss, start, 4_000))
  return { ...rates, ...compareWithCalibration(model, profileForRates(model.geometry, rates)) }
}

function nelderMead(
  f: (x: readonly number[]) => number,
  start: number[],
  iterations: number,
): number[] {
  const n = start.length
  let simplex = [start, ...start.map((_, i) => start.map((v, j) => (i === j ? v + 0.5 : v)))]
  let values = simplex.map(f)
  for (let iter = 0; iter < iterations; iter++) {
    const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0])
    simplex = order.map(([, i]) => simplex[i] as number[])
    values = order.map(([v]) => v)
    const centroid = Array.from(
      { length: n },
      (_, j) => simplex.slice(0, n).reduce((s, p) => s + (p[j] ?? 0), 0) / n,
    )
    const worst = simplex[n] as number[]
    const along = (t: number) => centroid.map((c, j) => c + t * (c - (worst[j] ?? 0)))
    const reflected = along(1)
    const fr = f(reflected)
    if (fr < (values[0] ?? 0)) {
      const expanded = along(2)
      const fe = f(expanded)
      ;[simplex[n], values[n]] = fe < fr ? [expanded, fe] : [reflected, fr]
    } else if (fr < (values[n - 1] ?? 0)) {
      ;[simplex[n], values[n]] = [reflected, fr]
    } else {
      const contracted = along(-0.5)
      const fc = f(contracted)
      if (fc < (values[n] ?? 0)) [simplex[n], values[n]] = [contracted, fc]
      else {
        const bestPoint = simplex[0] as number[]
        simplex = simplex.map((p) =>
          p.map((v, j) => (bestPoint[j] ?? 0) + 0.5 * (v - (bestPoint[j] ?? 0))),
        )
        values = simplex.map(f)
      }
    }
  }
  return simplex[values.indexOf(Math.min(...values))] as number[]
}
