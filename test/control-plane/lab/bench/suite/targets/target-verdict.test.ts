import { describe, expect, it } from 'vitest'
import {
  ratioVerdict,
  tallyTargets,
  targetLine,
} from '../../../../../../control-plane/lab/bench/suite/targets/target-verdict.ts'

describe('target verdicts', () => {
  it('judge a ratio only against a stable baseline', () => {
    expect(ratioVerdict(true, true)).toBe('met')
    expect(ratioVerdict(false, true)).toBe('not met')
    expect(ratioVerdict(true, false)).toBe('baseline unstable')
    expect(ratioVerdict(false, false)).toBe('baseline unstable')
  })

  it('print each verdict, and count the unjudged apart from met and not met', () => {
    const targets = [
      { name: 'a', verdict: 'met', detail: '1' },
      { name: 'b', verdict: 'not met', detail: '2' },
      { name: 'c', verdict: 'baseline unstable', detail: '65x, baseline unstable' },
      { name: 'd', verdict: 'met', detail: '4' },
    ] as const
    expect(targets.map(targetLine)).toEqual([
      '- met: a (1)',
      '- **not met**: b (2)',
      '- not judged (baseline unstable): c (65x, baseline unstable)',
      '- met: d (4)',
    ])
    expect(tallyTargets(targets)).toBe(
      '4 targets, 2 met, 1 not met, 1 not judged (baseline unstable)',
    )
  })
})
