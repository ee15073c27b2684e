import { describe, expect, it } from 'vitest'
import type { RuleMatch } from '../../../shared/policy/conditions/builtin-conditions.ts'
import type { MatchSubject } from '../../../shared/policy/conditions/policy-condition.ts'
import { matchRule } from '../../../shared/policy/match-rule.ts'
import { statuses } from './example-snapshot.ts'

const subject = (more: Partial<MatchSubject> = {}): MatchSubject => ({
  tenant: 't',
  model: 'm',
  promptTokens: 9000,
  labels: new Set(['pii', 'pii:card']),
  ...more,
})

describe('matchRule', () => {
  const cases: [string, RuleMatch, Parameters<typeof statuses>[0], boolean, string | RegExp][] = [
    ['no conditions match everything', {}, {}, true, /^$/],
    ['a tenant outside the list', { tenants: ['a', 'b'] }, {}, false, 'tenant t not in [a, b]'],
    ['a model outside the list', { models: ['x'] }, {}, false, 'model m not in [x]'],
    [
      'a prompt over the max',
      { promptTokens: { max: 8000 } },
      {},
      false,
      'promptTokens 9000 > max 8000',
    ],
    [
      'a prompt under the min',
      { promptTokens: { min: 10_000 } },
      {},
      false,
      'promptTokens 9000 < min 10000',
    ],
    [
      'a prompt in range',
      { promptTokens: { min: 1, max: 9000 } },
      {},
      true,
      'promptTokens 9000 within [1, 9000]',
    ],
    [
      'all labels present',
      { labels: { all: ['pii', 'pii:card'] } },
      {},
      true,
      /all of \[pii, pii:card\] present/,
    ],
    [
      'a required label missing',
      { labels: { all: ['pii', 'batch'] } },
      {},
      false,
      'labels: batch missing (all of [pii, batch] required)',
    ],
    [
      'any label absent',
      { labels: { any: ['batch'] } },
      {},
      false,
      'labels: none of [batch] present',
    ],
    [
      'an excluded label present',
      { labels: { none: ['pii:card'] } },
      {},
      false,
      'labels: pii:card present (none of [pii:card] allowed)',
    ],
    [
      'pool status unknown',
      { pool: { name: 'qwen-27b', saturated: true } },
      {},
      false,
      'pool kinference/qwen-27b status unknown',
    ],
    [
      'pool saturated as wanted',
      { pool: { name: 'qwen-27b', saturated: true } },
      { 'qwen-27b': { saturation: 1.2 } },
      true,
      'pool kinference/qwen-27b saturated',
    ],
    [
      'pool not saturated',
      { pool: { name: 'qwen-27b', saturated: true } },
      { 'qwen-27b': { saturation: 0.2 } },
      false,
      /is not saturated/,
    ],
    [
      'pool saturation above the range',
      { pool: { name: 'qwen-27b', saturation: { max: 0.5 } } },
      { 'qwen-27b': { saturation: 0.7 } },
      false,
      'pool kinference/qwen-27b saturation 0.7 > max 0.5',
    ],
    [
      'pool TTFT unknown',
      { pool: { name: 'qwen-27b', predictedTtftMs: { min: 100 } } },
      { 'qwen-27b': { saturation: 0.7 } },
      false,
      'pool kinference/qwen-27b predicted TTFT unknown',
    ],
    [
      'pool TTFT in range',
      { pool: { name: 'qwen-27b', predictedTtftMs: { min: 100 } } },
      { 'qwen-27b': { predictedTtftMs: 250 } },
      true,
      /predictedTtftMs 250 >= min 100/,
    ],
    [
      'request conditions fail before the pool is read',
      { models: ['x'], pool: { name: 'qwen-27b' } },
      {},
      false,
      'model m not in [x]',
    ],
  ]
  it.each(cases)('%s', (_name, match, pools, holds, why) => {
    const result = matchRule(match, 'kinference', subject(), statuses(pools))
    expect(result.holds).toBe(holds)
    const text = result.holds ? result.why.join(', ') : result.why
    if (typeof why === 'string') expect(text).toBe(why)
    else expect(text).toMatch(why)
  })
})
