import { describe, expect, it } from 'vitest'
import {
  type MatrixOptions,
  MatrixRunOptions,
  runBenchmarkMatrix,
} from '../../../../control-plane/lab/bench/run-benchmark-matrix.ts'
import { LiveBenchmarkTimingOptions } from '../../../../control-plane/lab/bench/run-live-benchmark.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'

// Refused before anything runs, so nothing else of the matrix is needed.
const empty: MatrixOptions = {
  mode: 'des',
  workloads: [],
  routers: [],
  pods: 1,
  profile: l40s27bFp8,
  seed: 1,
  assets: undefined as never,
}

describe('the matrix run options', () => {
  it('default to one thread and the live benchmark’s time scale', () => {
    expect(MatrixRunOptions.parse({})).toEqual({
      threads: 1,
      timeScale: LiveBenchmarkTimingOptions.parse({}).timeScale,
    })
  })

  it('refuse a thread count or time scale that cannot run, naming the option', async () => {
    await expect(runBenchmarkMatrix({ ...empty, threads: 0 })).rejects.toMatchObject({
      code: 'invalid_config',
      message: 'benchmark matrix: threads must be a positive integer',
    })
    await expect(
      runBenchmarkMatrix({ ...empty, mode: 'live', timeScale: -1 }),
    ).rejects.toMatchObject({
      code: 'invalid_config',
      message: 'benchmark matrix: timeScale must be a number > 0',
    })
  })
})
