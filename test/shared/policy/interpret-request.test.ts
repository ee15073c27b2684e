import { beforeAll, describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { decidePolicy, evaluatePolicy } from '../../../shared/policy/evaluate-policy.ts'
import { interpretRequest } from '../../../shared/policy/interpret-request.ts'
import type { PoolStatus } from '../../../shared/policy/policy-decision.ts'
import { exampleSnapshot, request } from './example-snapshot.ts'

let snapshot: ConfigSnapshot
beforeAll(async () => {
  snapshot = await exampleSnapshot()
})

describe('the pools a reading of the request asks', () => {
  const cases: [string, Parameters<typeof request>, string[]][] = [
    [
      'preferCheaper compares both pools',
      ['acme-support', 'chat'],
      ['kinference/qwen-27b', 'kinference/qwen-8b'],
    ],
    [
      'a route to one backend needs no status',
      ['acme-support', 'chat', { promptTokens: 5000 }],
      [],
    ],
    ['burst reads the local pool', ['globex', 'qwen3.8-27b-fp8'], ['kinference/qwen-27b']],
    [
      'deferUntilIdle reads its pool',
      ['umbrella-analytics', 'qwen3.8-27b-fp8', { labels: ['batch'] }],
      ['kinference/qwen-27b'],
    ],
    ['interactive work on one backend does not', ['umbrella-analytics', 'qwen3.8-27b-fp8'], []],
    [
      'a fixed route with a fallback does not',
      ['initech-health', 'qwen3.8-27b-fp8', { labels: ['pii'] }],
      [],
    ],
    [
      'a failed detector takes the PII path',
      ['initech-health', 'qwen3.8-27b-fp8', { detectorFailed: true }],
      [],
    ],
    [
      'without PII the burst rule needs the pool',
      ['initech-health', 'qwen3.8-27b-fp8'],
      ['kinference/qwen-27b'],
    ],
    ['an alias follows its rewrite', ['hooli', 'gpt-4o'], []],
    ['a rejected prompt needs nothing', ['free-tier', 'qwen3-8b', { promptTokens: 5000 }], []],
    ['a model the tenant may not use needs nothing', ['free-tier', 'qwen3.8-27b-fp8'], []],
    ['an unknown tenant needs nothing', ['nobody', 'qwen3-8b'], []],
  ]
  it.each(cases)('%s', (_name, args, expected) => {
    expect(interpretRequest(snapshot, request(...args)).pools).toEqual(expected)
  })

  it('follows both paths from a rule with a pool condition', async () => {
    // An alias that only applies while the 27B pool is saturated: both the rewritten
    // and the original model may reach later rules.
    const conditional = await exampleSnapshot((documents) => {
      const policy = documents.find(
        (d) => (d as { metadata?: { name?: string } }).metadata?.name === 'model-alias',
      ) as { spec: { rules: unknown[] } }
      policy.spec.rules.unshift({
        name: 'overflow-to-8b',
        match: { models: ['gpt-4o'], pool: { name: 'qwen-27b', saturated: true } },
        action: { rewriteModel: { model: 'qwen3-8b' } },
      })
    })
    expect(interpretRequest(conditional, request('hooli', 'gpt-4o')).pools).toEqual([
      'kinference/qwen-27b',
    ])
  })
})

describe('deciding on a reading', () => {
  const busy: PoolStatus = { saturation: 1.2, saturated: true, predictedTtftMs: 900 }

  it('decides as evaluatePolicy does, whatever the pools report', () => {
    for (const args of [
      ['acme-support', 'chat'],
      ['globex', 'qwen3.8-27b-fp8'],
      ['initech-health', 'qwen3.8-27b-fp8', { labels: ['pii'] }],
      ['umbrella-analytics', 'qwen3.8-27b-fp8', { labels: ['batch'] }],
      ['hooli', 'gpt-4o'],
      ['nobody', 'qwen3-8b'],
    ] as Parameters<typeof request>[]) {
      for (const status of [() => undefined, () => busy]) {
        const asked = request(...args)
        expect(decidePolicy(interpretRequest(snapshot, asked), status)).toEqual(
          evaluatePolicy(snapshot, { request: asked, poolStatus: status }),
        )
      }
    }
  })

  it('takes the request conditions from the reading instead of testing them again', () => {
    const interpreted = interpretRequest(snapshot, request('globex', 'qwen3.8-27b-fp8'))
    const tested: [number, string][] = []
    const decision = decidePolicy(
      {
        ...interpreted,
        requestConditions: (index, model) => {
          tested.push([index, model])
          return { holds: false, why: 'held back by the test' }
        },
      },
      () => busy,
    )
    expect(decision).toMatchObject({ kind: 'reject', code: 'model_not_found' })
    expect(tested.length).toBeGreaterThan(0)
    expect(decision.trace.every((step) => step.why === 'held back by the test')).toBe(true)
  })

  it('tests each rule once per model however often it is asked', () => {
    const interpreted = interpretRequest(snapshot, request('globex', 'qwen3.8-27b-fp8'))
    const first = interpreted.requestConditions(0, 'qwen3.8-27b-fp8')
    expect(interpreted.requestConditions(0, 'qwen3.8-27b-fp8')).toBe(first)
  })
})
