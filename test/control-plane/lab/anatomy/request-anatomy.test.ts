import { describe, expect, it } from 'vitest'
import {
  byPod,
  byTurn,
  byWindow,
  dispatchLoad,
  quantile,
} from '../../../../control-plane/lab/anatomy/request-anatomy.ts'
import type { RequestRecord } from '../../../../control-plane/lab/bench/request-record.ts'

function record(
  id: string,
  pod: string,
  startMs: number,
  ttftMs: number,
  options: { endMs?: number; turn?: number; cachedTokens?: number } = {},
): RequestRecord {
  return {
    id,
    conversation: 0,
    turn: options.turn ?? 0,
    startMs,
    firstTokenMs: startMs + ttftMs,
    tokenTimesMs: [startMs + ttftMs],
    endMs: options.endMs ?? startMs + ttftMs + 1_000,
    promptTokens: 1_000,
    outputTokens: 1,
    cachedTokens: options.cachedTokens ?? 0,
    pod,
    error: null,
  }
}

describe('request anatomy', () => {
  it('takes nearest-rank quantiles', () => {
    expect(quantile([5, 1, 4, 2, 3], 0.5)).toBe(3)
    expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9)).toBe(9)
    expect(quantile([], 0.5)).toBeNaN()
  })

  it('groups TTFT and cache misses by turn, pod and window of arrivals', () => {
    const records = [
      record('a', 'pod-0', 0, 100, { turn: 0 }),
      record('b', 'pod-1', 10_000, 300, { turn: 1, cachedTokens: 900 }),
      record('c', 'pod-1', 40_000, 5_000, { turn: 1 }),
    ]
    expect(byTurn(records)).toEqual([
      { key: 'turn 0', requests: 1, medianS: 0.1, p90S: 0.1, missShare: 1 },
      { key: 'turn 1', requests: 2, medianS: 0.3, p90S: 5, missShare: 0.5 },
    ])
    expect(byPod(records).map((g) => [g.key, g.requests])).toEqual([
      ['pod-0', 1],
      ['pod-1', 2],
    ])
    expect(byWindow(records, 30).map((g) => [g.key, g.requests, g.p90S])).toEqual([
      ['0 s', 2, 0.3],
      ['30 s', 1, 5],
    ])
  })

  it('shows a pile-up: the slow requests’ pod was busier than the least busy other', () => {
    // pod-0 holds three requests waiting when the slow one arrives; pod-1 holds one running.
    const records = [
      record('w1', 'pod-0', 0, 20_000),
      record('w2', 'pod-0', 100, 20_000),
      record('w3', 'pod-0', 200, 20_000),
      record('r1', 'pod-1', 0, 50, { endMs: 30_000 }),
      record('slow', 'pod-0', 1_000, 60_000),
      ...Array.from({ length: 10 }, (_, i) => record(`f${i}`, 'pod-1', 40_000 + i, 50)),
    ]
    const load = dispatchLoad([records], 0.9)
    expect(load.slowRequests).toBe(1)
    expect(load.chosen).toEqual({ inFlight: 3, waiting: 3 })
    expect(load.leastBusyOther).toEqual({ inFlight: 1, waiting: 0 })
    // A second run's pods share the names: their requests are not counted with the first's.
    const other = records.map((r) => ({
      ...r,
      id: `2-${r.id}`,
      pod: r.pod === 'pod-0' ? 'pod-1' : 'pod-0',
    }))
    const both = dispatchLoad([records, other], 0.9)
    expect(both.slowRequests).toBe(2)
    expect(both.chosen).toEqual({ inFlight: 3, waiting: 3 })
    expect(both.leastBusyOther).toEqual({ inFlight: 1, waiting: 0 })
  })
})
