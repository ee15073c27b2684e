import { describe, expect, it } from 'vitest'
import {
  DecisionEntry,
  joinDecisions,
  type StoredDecisionEntry,
} from '../../../shared/state/decision-entry.ts'
import { createDecisionFollower } from '../../../shared/state/decision-follower.ts'
import { summarizeDecisions } from '../../../shared/state/decision-summary.ts'
import { decided, ended } from '../../support/state-store-conformance.ts'

const t0 = 1_800_000_000_000
let seq = 0
const stored = (entry: StoredDecisionEntry['entry']): StoredDecisionEntry => ({
  id: `${t0}-${seq++}`,
  entry,
})

describe('joinDecisions', () => {
  it('gives each decision its end, a retry its own decision per pod', () => {
    const log = [
      stored(decided('a', t0, { pod: 'pod-0' })),
      stored(decided('b', t0)),
      stored(ended('a', t0 + 1, { pod: 'pod-0', outcome: 'failed-before-bytes', ttftMs: null })),
      stored(decided('a', t0 + 2, { pod: 'pod-1' })),
      stored(ended('a', t0 + 3, { pod: 'pod-1' })),
      // An end whose decision was trimmed from the log.
      stored(ended('gone', t0 + 4)),
    ]
    const joined = joinDecisions(log)
    expect(joined.map((d) => [d.requestId, d.pod, d.end?.outcome ?? null])).toEqual([
      ['a', 'pod-0', 'failed-before-bytes'],
      ['b', 'pod-0', null],
      ['a', 'pod-1', 'completed'],
    ])
    expect(joined[0]?.id).toBe(log[0]?.id)
  })
})

describe('DecisionEntry', () => {
  it('keys entries by a request id, the client’s kept beside it, both bounded and printable', () => {
    expect(DecisionEntry.safeParse(decided('a', t0, { clientRequestId: 'client-1' })).success).toBe(
      true,
    )
    for (const id of ['x'.repeat(129), 'with space', 'c1\u0085', 'esc\u001b[2J', ''])
      expect(DecisionEntry.safeParse(decided(id, t0)).success, JSON.stringify(id)).toBe(false)
    expect(
      DecisionEntry.safeParse(decided('a', t0, { clientRequestId: 'x'.repeat(32 * 1024) })).success,
    ).toBe(false)
    expect(DecisionEntry.safeParse(ended('\u009b31m', t0)).success).toBe(false)
  })

  it('joins two requests that clients gave the same x-request-id as two decisions', () => {
    const log = [
      stored(decided('edge-1', t0, { tenant: 'acme', clientRequestId: 'same' })),
      stored(decided('edge-2', t0, { tenant: 'umbrella', clientRequestId: 'same' })),
      stored(ended('edge-2', t0 + 1, { outputTokens: 2 })),
      stored(ended('edge-1', t0 + 2, { outputTokens: 1 })),
    ]
    const joined = joinDecisions(log)
    expect(joined.map((d) => [d.tenant, d.clientRequestId, d.end?.outputTokens])).toEqual([
      ['acme', 'same', 1],
      ['umbrella', 'same', 2],
    ])
  })
})

describe('createDecisionFollower', () => {
  it('returns each decision once it has ended, its end read later', () => {
    const follower = createDecisionFollower((d) => d.tenant === 'demo')
    expect(
      follower.push([stored(decided('a', t0)), stored(decided('x', t0, { tenant: 'other' }))], t0),
    ).toEqual([])
    expect(follower.pending).toBe(1)
    const done = follower.push([stored(ended('a', t0 + 10)), stored(ended('x', t0 + 10))], t0 + 10)
    expect(done.map((d) => [d.requestId, d.end?.ttftMs])).toEqual([['a', 60]])
    expect(follower.pending).toBe(0)
  })

  it('tells when a decision opens, and follows one read earlier to its end', () => {
    const opened: string[] = []
    const follower = createDecisionFollower(
      () => true,
      undefined,
      (d) => opened.push(d.requestId),
    )
    const [earlier] = joinDecisions([stored(decided('old', t0))])
    if (!earlier) throw new Error('expected a decision')
    follower.follow(earlier)
    expect(follower.push([stored(decided('new', t0))], t0)).toEqual([])
    expect(opened).toEqual(['new'])
    const done = follower.push([stored(ended('old', t0 + 5)), stored(ended('new', t0 + 5))], t0 + 5)
    expect(done.map((d) => d.requestId).sort()).toEqual(['new', 'old'])
    expect(opened).toEqual(['new'])
  })

  it('gives up waiting for an end after a while', () => {
    const follower = createDecisionFollower(() => true, 1_000)
    follower.push([stored(decided('slow', t0))], t0)
    expect(follower.push([], t0 + 999)).toEqual([])
    expect(follower.push([], t0 + 1_001).map((d) => [d.requestId, d.end])).toEqual([['slow', null]])
  })
})

describe('summarizeDecisions', () => {
  it('prediction error percentiles and hit rates over the decisions given', () => {
    const log = [
      stored(decided('a', t0, { predictedTtftMs: 50, promptTokens: 100, matchedTokens: 50 })),
      stored(ended('a', t0, { ttftMs: 60, cachedTokens: 80 })),
      stored(decided('b', t0, { predictedTtftMs: 100, promptTokens: 100, matchedTokens: 0 })),
      stored(ended('b', t0, { ttftMs: 80, cachedTokens: 0 })),
      stored(decided('c', t0, { promptTokens: 200, matchedTokens: 150 })),
    ]
    expect(summarizeDecisions(joinDecisions(log))).toEqual({
      decisions: 3,
      ended: 2,
      completed: 2,
      absoluteErrorMs: { p50: 20, p90: 20, p99: 20 },
      medianRelativeError: 1 / 6,
      hitRate: 80 / 200,
      predictedHitRate: 200 / 400,
    })
    expect(summarizeDecisions([])).toMatchObject({
      decisions: 0,
      absoluteErrorMs: null,
      hitRate: null,
    })
  })
})
