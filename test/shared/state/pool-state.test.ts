import { describe, expect, it } from 'vitest'
import {
  mergePoolViews,
  type PoolCondition,
  PoolStateView,
} from '../../../shared/state/pool-state.ts'

const t0 = 1_800_000_000_000

const condition = (
  type: string,
  status: PoolCondition['status'],
  lastTransitionMs = t0,
): PoolCondition => ({
  type,
  status,
  reason: status === 'False' ? 'TokenizerUnavailable' : 'TokenizerLoaded',
  message: `${type} ${status}`,
  lastTransitionMs,
  example: null,
})

describe('mergePoolViews', () => {
  it('shows the worst status any replica reports, with the replicas that report it', () => {
    const merged = mergePoolViews([
      {
        replica: 'r1',
        pools: [
          { pool: 'ns/b', conditions: [condition('TokenizerReady', 'True')] },
          {
            pool: 'ns/a',
            conditions: [
              condition('TokenizerReady', 'True'),
              condition('TokenizationAgrees', 'Unknown'),
            ],
          },
        ],
      },
      {
        replica: 'r2',
        pools: [
          {
            pool: 'ns/a',
            conditions: [
              condition('TokenizerReady', 'False', t0 + 5),
              condition('TokenizationAgrees', 'True'),
            ],
          },
        ],
      },
      {
        replica: 'r3',
        pools: [{ pool: 'ns/a', conditions: [condition('TokenizerReady', 'False', t0 + 9)] }],
      },
    ])
    expect(merged.map((p) => p.pool)).toEqual(['ns/a', 'ns/b'])
    const [a, b] = merged
    expect(a?.conditions.map((c) => [c.type, c.status, c.replicas])).toEqual([
      ['TokenizationAgrees', 'True', ['r2']],
      ['TokenizerReady', 'False', ['r2', 'r3']],
    ])
    expect(a?.conditions[1]?.lastTransitionMs).toBe(t0 + 9)
    expect(b?.conditions).toEqual([{ ...condition('TokenizerReady', 'True'), replicas: ['r1'] }])
  })

  it('the schema refuses a condition out of shape', () => {
    const bad = { pool: 'p', conditions: [{ ...condition('X', 'True'), status: 'Maybe' }] }
    expect(PoolStateView.safeParse(bad).success).toBe(false)
  })
})
