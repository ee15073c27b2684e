import { describe, expect, it } from 'vitest'
import { matchRequiresAnyLabel, ruleCovers } from '../../../shared/config/rule-covers.ts'
import type { RuleMatch } from '../../../shared/policy/conditions/builtin-conditions.ts'
import { toyConditions } from '../../support/toy-condition.ts'

describe('ruleCovers', () => {
  const cases: [string, RuleMatch, RuleMatch, boolean][] = [
    ['a catch-all covers anything', {}, { models: ['m'], labels: { all: ['pii'] } }, true],
    ['nothing narrower covers a catch-all', { models: ['m'] }, {}, false],
    ['a model list covers a subset', { models: ['a', 'b'] }, { models: ['a'] }, true],
    ['a model list does not cover a superset', { models: ['a'] }, { models: ['a', 'b'] }, false],
    [
      'an open-ended range covers a bounded one inside it',
      { promptTokens: { min: 10 } },
      { promptTokens: { min: 20, max: 30 } },
      true,
    ],
    [
      'a range does not cover one reaching below it',
      { promptTokens: { min: 10 } },
      { promptTokens: { max: 30 } },
      false,
    ],
    [
      'a bounded range does not cover an open one',
      { promptTokens: { max: 100 } },
      { promptTokens: { min: 5 } },
      false,
    ],
    [
      'all-labels covers a rule requiring more labels',
      { labels: { all: ['pii'] } },
      { labels: { all: ['pii', 'batch'] } },
      true,
    ],
    [
      'all-labels does not cover a rule requiring fewer',
      { labels: { all: ['pii', 'batch'] } },
      { labels: { all: ['pii'] } },
      false,
    ],
    [
      'any-labels covers a rule requiring one of them',
      { labels: { any: ['pii', 'secret'] } },
      { labels: { all: ['secret'] } },
      true,
    ],
    [
      'any-labels covers a narrower any',
      { labels: { any: ['pii', 'secret'] } },
      { labels: { any: ['pii'] } },
      true,
    ],
    [
      'any-labels does not cover a wider any',
      { labels: { any: ['pii'] } },
      { labels: { any: ['pii', 'x'] } },
      false,
    ],
    [
      'none-labels covers a rule excluding more',
      { labels: { none: ['pii'] } },
      { labels: { none: ['pii', 'x'] } },
      true,
    ],
    [
      'none-labels does not cover a rule that may carry the label',
      { labels: { none: ['pii'] } },
      {},
      false,
    ],
    [
      'pool status never covers a different condition',
      { pool: { name: 'p', saturated: true } },
      { pool: { name: 'p', saturated: false } },
      false,
    ],
    [
      'pool status covers the identical condition',
      { pool: { name: 'p', saturated: true } },
      { pool: { name: 'p', saturated: true } },
      true,
    ],
    [
      'tenants and models must both cover',
      { tenants: ['t'], models: ['m'] },
      { tenants: ['t'], models: ['n'] },
      false,
    ],
  ]
  it.each(cases)('%s', (_name, earlier, later, expected) => {
    expect(ruleCovers(earlier, later)).toBe(expected)
  })

  it('doubts a condition its registry does not know rather than take it as absent', () => {
    expect(ruleCovers({ tenantPrefix: 'team-' }, {})).toBe(false)
    expect(ruleCovers({ tenantPrefix: 'team-' }, { tenantPrefix: 'team-a' }, toyConditions)).toBe(
      true,
    )
    expect(ruleCovers({}, { tenantPrefix: 'team-' })).toBe(true)
  })
})

describe('matchRequiresAnyLabel', () => {
  it('is true only when every matching request must carry one of the labels', () => {
    expect(matchRequiresAnyLabel({ labels: { all: ['pii:card', 'pii'] } }, ['pii'])).toBe(true)
    expect(matchRequiresAnyLabel({ labels: { any: ['pii'] } }, ['pii'])).toBe(true)
    expect(matchRequiresAnyLabel({ labels: { any: ['pii', 'batch'] } }, ['pii'])).toBe(false)
    expect(matchRequiresAnyLabel({ models: ['m'] }, ['pii'])).toBe(false)
  })
})
