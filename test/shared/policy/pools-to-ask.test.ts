import { beforeAll, describe, expect, it } from 'vitest'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { poolsToAsk } from '../../../shared/policy/pools-to-ask.ts'
import { exampleSnapshot, request } from './example-snapshot.ts'

let snapshot: ConfigSnapshot
beforeAll(async () => {
  snapshot = await exampleSnapshot()
})

describe('poolsToAsk', () => {
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
    expect(poolsToAsk(snapshot, request(...args))).toEqual(expected)
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
    expect(poolsToAsk(conditional, request('hooli', 'gpt-4o'))).toEqual(['kinference/qwen-27b'])
  })
})
