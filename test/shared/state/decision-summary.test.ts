import { describe, expect, it } from 'vitest'
import { joinDecisions, type StoredDecisionEntry } from '../../../shared/state/decision-entry.ts'
import { summarizeDecisions } from '../../../shared/state/decision-summary.ts'
import { externalOutcome, externalStrategy } from '../../../shared/state/external-strategy.ts'
import { decided, ended } from '../../support/state-store-conformance.ts'

const t0 = 1_800_000_000_000
let seq = 0
const stored = (entry: StoredDecisionEntry['entry']): StoredDecisionEntry => ({
  id: `${t0}-${seq++}`,
  entry,
})

describe('summarizeDecisions with an external provider’s requests', () => {
  it('counts them as decisions, but keeps TTFT errors and hit rates the pods’', () => {
    const onPod = [
      stored(decided('a', t0, { predictedTtftMs: 50, promptTokens: 100, matchedTokens: 50 })),
      stored(ended('a', t0, { ttftMs: 60, cachedTokens: 80 })),
    ]
    // Timed and counted by the edge (edge-decision-log.ts): nothing was predicted or matched.
    const external = [
      stored(
        decided('b', t0, {
          pod: 'claude',
          pool: 'ns/bedrock',
          strategy: externalStrategy,
          predictedTtftMs: 0,
          promptTokens: 300,
          matchedTokens: 0,
        }),
      ),
      stored(
        ended('b', t0, { pod: 'claude', ttftMs: 900, cachedTokens: 300, outcome: externalOutcome }),
      ),
    ]
    expect(summarizeDecisions(joinDecisions([...onPod, ...external]))).toEqual({
      ...summarizeDecisions(joinDecisions(onPod)),
      decisions: 2,
      ended: 2,
    })
    expect(summarizeDecisions(joinDecisions(onPod))).toMatchObject({
      absoluteErrorMs: { p50: 10 },
      hitRate: 0.8,
      predictedHitRate: 0.5,
    })
  })
})
