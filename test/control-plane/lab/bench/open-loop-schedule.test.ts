import { beforeAll, describe, expect, it } from 'vitest'
import { parseDataSpec } from '../../../../control-plane/lab/bench/data-spec.ts'
import { arrivalTimes } from '../../../../control-plane/lab/bench/load-profile.ts'
import { openLoopSchedule } from '../../../../control-plane/lab/bench/open-loop-schedule.ts'
import { createWorkload, type Workload } from '../../../../control-plane/lab/bench/workload.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'

let assets: ReturnType<typeof loadSimModelAssets>

beforeAll(() => {
  assets = loadSimModelAssets()
})

const workloadOf = (data: string) => createWorkload(parseDataSpec(data), 42, assets.vocabulary)

describe('openLoopSchedule', () => {
  it('is the profile’s own arrivals, in conversation order, without fan-out', () => {
    const workload = workloadOf('prompt_tokens=8,output_tokens=1')
    const profile = { kind: 'poisson', rate: 3 } as const
    const starts = openLoopSchedule(profile, workload, 50, createSeededRandom(11))
    expect(starts.map((s) => s.conversation)).toEqual(Array.from({ length: 50 }, (_, i) => i))
    expect(starts.map((s) => s.atMs)).toEqual(arrivalTimes(profile, 50, createSeededRandom(11)))
  })

  it('sends fan-out siblings in bursts within the window, bursts at rate / size', () => {
    const workload = workloadOf(
      'fan_out=16,fan_out_window_ms=50,prefix_tokens=64,prompt_tokens=8,output_tokens=1',
    )
    const starts = openLoopSchedule(
      { kind: 'poisson', rate: 8 },
      workload,
      16 * 400,
      createSeededRandom(11),
    )
    expect(starts).toHaveLength(6400)
    for (let i = 1; i < starts.length; i++)
      expect(starts[i]?.atMs).toBeGreaterThanOrEqual(starts[i - 1]?.atMs ?? 0)
    const byBurst = new Map<number, number[]>()
    for (const { atMs, conversation } of starts) {
      const burst = Math.floor(conversation / 16)
      byBurst.set(burst, [...(byBurst.get(burst) ?? []), atMs])
    }
    const firsts: number[] = []
    for (const times of byBurst.values()) {
      expect(times).toHaveLength(16)
      expect(Math.max(...times) - Math.min(...times)).toBeLessThan(50)
      firsts.push(Math.min(...times))
    }
    // 400 bursts at 0.5/s: the mean gap is 2 s (standard error 0.1 s).
    firsts.sort((a, b) => a - b)
    const meanGap = ((firsts.at(-1) ?? 0) - (firsts[0] ?? 0)) / (firsts.length - 1)
    expect(Math.abs(meanGap - 2000)).toBeLessThan(400)
  })

  it('cuts a burst at count and is the same for the same seed', () => {
    const workload = workloadOf('fan_out=4,prefix_tokens=8,prompt_tokens=8,output_tokens=1')
    const profile = { kind: 'constant', rate: 4 } as const
    const starts = openLoopSchedule(profile, workload, 10, createSeededRandom(1))
    expect(starts.map((s) => s.conversation).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ])
    expect(openLoopSchedule(profile, workload, 10, createSeededRandom(1))).toEqual(starts)
    // Constant bursts one second apart (4 requests/s in bursts of 4).
    expect(starts.filter((s) => s.conversation >= 8).every((s) => s.atMs >= 2000)).toBe(true)
  })

  it('replays a trace’s timestamps divided by the speed, and nothing else under trace', () => {
    const trace: Workload = { ...workloadOf('prompt_tokens=8,output_tokens=1') }
    const replay = { ...trace, size: 3, timestampsMs: [0, 400, 1000] }
    expect(openLoopSchedule({ kind: 'trace', rate: 2 }, replay, 10, createSeededRandom(1))).toEqual(
      [
        { atMs: 0, conversation: 0 },
        { atMs: 200, conversation: 1 },
        { atMs: 500, conversation: 2 },
      ],
    )
    expect(() =>
      openLoopSchedule({ kind: 'trace', rate: 1 }, trace, 3, createSeededRandom(1)),
    ).toThrow(/profile trace replays a trace/)
  })
})
