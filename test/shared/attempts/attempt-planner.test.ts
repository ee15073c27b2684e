import { describe, expect, it } from 'vitest'
import {
  type AttemptResult,
  attemptPlanner,
  fallbackHeaders,
  type PlanStep,
  type ServeDecision,
} from '../../../shared/attempts/attempt-planner.ts'
import type { LocalityConstraint } from '../../../shared/crd/inference-policy.ts'
import type { UpstreamTarget } from '../../../shared/policy/policy-decision.ts'

const local = (name: string): UpstreamTarget => ({
  backend: `ns/${name}`,
  locality: 'InCluster',
  pool: `ns/${name}-pool`,
  model: 'm',
})
const external = (name: string): UpstreamTarget => ({
  backend: `ns/${name}`,
  locality: 'External',
  provider: `ns/${name}-provider`,
  model: 'm',
})
const decision = (...attempts: UpstreamTarget[]): ServeDecision => ({
  kind: 'serve',
  policy: 'ns/policy',
  rule: 'burst',
  model: 'm',
  attempts,
  reason: 'test',
  trace: [],
})
const pii: LocalityConstraint = { name: 'pii-stays', labels: ['pii'], locality: 'InCluster' }

/** The steps the planner takes when every attempt it names yields `result(backend)`. */
function walk(
  serve: ServeDecision,
  heldBy: LocalityConstraint | null,
  result: (backend: string) => AttemptResult,
  resume?: { from: number; notes: string[] },
): PlanStep[] {
  const planner = attemptPlanner(serve, { heldBy, ...(resume ? { resume } : {}) })
  const steps: PlanStep[] = [planner.first()]
  for (let step = steps[0]; step?.kind === 'try'; step = steps.at(-1)) {
    steps.push(planner.after(step, result(step.target.backend)))
  }
  return steps
}

const saturated: AttemptResult = { kind: 'saturated' }

describe('attemptPlanner', () => {
  it('tries the attempts in order, each after the notes of the ones passed over', () => {
    const steps = walk(decision(local('a'), local('b'), external('c')), null, () => saturated)
    expect(
      steps.map((s) => (s.kind === 'try' ? [s.index, s.allowBurst, s.notes] : s.kind)),
    ).toEqual([
      [0, true, []],
      [1, true, ['ns/a: saturated']],
      [2, false, ['ns/a: saturated', 'ns/b: saturated']],
      'exhausted',
    ])
    const [first] = steps
    expect(first?.kind === 'try' && first.decisionHeader).toBe(
      'policy=ns/policy; rule=burst; backend=ns/a; locality=InCluster; model=m',
    )
    const third = steps[2]
    expect(third?.kind === 'try' && third.burst).toBe(true)
    const end = steps.at(-1)
    // The last attempt failed: its own result is what the client gets.
    expect(end).toMatchObject({ kind: 'exhausted', from: 3, keptLocal: null })
    expect(end?.kind === 'exhausted' && end.failed?.step.target.backend).toBe('ns/c')
  })

  it('lets the last local attempt answer saturated only for a request that must stay local', () => {
    const alone = decision(local('a'))
    expect(walk(alone, null, () => saturated)[0]).toMatchObject({ last: true, allowBurst: false })
    expect(walk(alone, pii, () => saturated)[0]).toMatchObject({ last: true, allowBurst: true })
  })

  it('never reaches an external attempt of a request held local, and refuses it saying why', () => {
    const steps = walk(decision(local('a'), external('c')), pii, () => saturated)
    expect(steps.filter((s) => s.kind === 'try')).toHaveLength(1)
    expect(steps.at(-1)).toEqual({
      kind: 'exhausted',
      from: 2,
      notes: ['ns/a: saturated', 'ns/c: kept local by pii-stays'],
      keptLocal: { constraint: pii, busy: 'ns/a: saturated; ns/c: kept local by pii-stays' },
      failed: null,
    })
    // Every attempt external: nothing in the cluster could ever serve it (no "busy").
    const outside = walk(decision(external('c')), pii, () => saturated)
    expect(outside).toEqual([
      {
        kind: 'exhausted',
        from: 1,
        notes: ['ns/c: kept local by pii-stays'],
        keptLocal: { constraint: pii, busy: null },
        failed: null,
      },
    ])
  })

  it('moves past a skipped attempt even when it is the last, leaving no failure to answer', () => {
    const steps = walk(decision(local('a'), local('b')), null, (backend) =>
      backend === 'ns/b' ? { kind: 'skipped', why: 'not here' } : saturated,
    )
    expect(steps.at(-1)).toMatchObject({
      kind: 'exhausted',
      notes: ['ns/a: saturated', 'ns/b: not here'],
      failed: null,
    })
  })

  it('stops at a failed last attempt with its error, and moves past earlier ones', () => {
    const error = new Error('down')
    const steps = walk(decision(external('c'), external('d')), null, () => ({
      kind: 'unavailable',
      why: 'down',
      error,
    }))
    const end = steps.at(-1)
    expect(end?.kind === 'exhausted' && end.failed?.result).toEqual({
      kind: 'unavailable',
      why: 'down',
      error,
    })
    expect(end?.notes).toEqual(['ns/c: down', 'ns/d: down'])
    // No local attempt: an external one is no burst.
    expect(steps.every((s) => s.kind !== 'try' || !s.burst)).toBe(true)
  })

  it('resumes where the other side handed the decision over, with its notes', () => {
    const steps = walk(decision(local('a'), external('c')), null, () => saturated, {
      from: 1,
      notes: ['ns/a: saturated'],
    })
    expect(steps[0]).toMatchObject({ kind: 'try', index: 1, notes: ['ns/a: saturated'] })
    const done = walk(decision(local('a')), pii, () => saturated, {
      from: 1,
      notes: ['ns/a: saturated'],
    })
    expect(done).toEqual([
      {
        kind: 'exhausted',
        from: 1,
        notes: ['ns/a: saturated'],
        keptLocal: { constraint: pii, busy: 'ns/a: saturated' },
        failed: null,
      },
    ])
  })

  it('names the passed-over attempts in x-kinference-fallback, printable only', () => {
    expect(fallbackHeaders([])).toEqual({})
    expect(fallbackHeaders(['ns/a: saturated', 'ns/b: é'])).toEqual({
      'x-kinference-fallback': 'ns/a: saturated; ns/b: ?',
    })
  })
})
