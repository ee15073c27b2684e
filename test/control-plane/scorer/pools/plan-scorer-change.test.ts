import { describe, expect, it } from 'vitest'
import { planScorerChange } from '../../../../control-plane/scorer/pools/plan-scorer-change.ts'
import type { ScorerPod } from '../../../../control-plane/scorer/scorer-config.ts'
import type { ScorerState } from '../../../../control-plane/scorer/state/scorer-state.ts'
import { poolSpec } from '../../../support/scorer-stack.ts'

describe('planScorerChange', () => {
  const pod = (name: string, pool = 'test/p'): ScorerPod => ({
    name,
    pool,
    http: `http://${name}:8000`,
    metrics: null,
    events: `tcp://${name}:5557`,
    replay: null,
    dataParallelRank: null,
  })
  const state = (spec = poolSpec(), pods = [pod('a'), pod('b')]): ScorerState => ({
    hash: null,
    pools: [{ id: 'test/p', name: 'p', namespace: 'test', spec }],
    pods,
    backends: {},
  })

  it('a pod whose address changed is re-added; one whose pool now serves another model too', () => {
    const moved = planScorerChange(
      state(),
      state(poolSpec(), [pod('a'), { ...pod('b'), http: 'http://c:1' }]),
    )
    expect(moved.pods).toMatchObject({ added: [], removed: [], changed: [{ name: 'b' }] })
    expect(moved.pools.kept).toEqual(['test/p'])
    const renamed = poolSpec({
      models: [{ name: 'other-model', tokenizer: 'qwen3', maxContextTokens: 32_768 }],
    })
    const plan = planScorerChange(state(), state(renamed))
    expect(plan.pools.changed.map((pool) => pool.id)).toEqual(['test/p'])
    expect(plan.pods.changed.map((p) => p.name)).toEqual(['a', 'b'])
  })

  it('a spec equal but for the order of its keys is the same spec', () => {
    const spec = poolSpec()
    const reordered = Object.fromEntries(Object.entries(spec).reverse()) as typeof spec
    const plan = planScorerChange(state(spec), state(reordered))
    expect(plan.pools).toMatchObject({ added: [], removed: [], changed: [], kept: ['test/p'] })
  })
})
