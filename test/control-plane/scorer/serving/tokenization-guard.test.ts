import { describe, expect, it } from 'vitest'
import {
  type TokenCountObservation,
  TokenizationGuard,
} from '../../../../control-plane/scorer/serving/tokenization-guard.ts'

const t0 = 1_800_000_000_000
const minute = 60_000

/** One answered request: prompt counts as given, cached counts agreeing unless told. */
function answer(
  i: number,
  atMs: number,
  counts: Partial<TokenCountObservation> = {},
): TokenCountObservation {
  return {
    requestId: `req-${i}`,
    model: 'm',
    pod: `pod-${i % 2}`,
    scorerPromptTokens: 100,
    reportedPromptTokens: 100,
    predictedCachedTokens: 64,
    reportedCachedTokens: 64,
    blockSize: 16,
    atMs,
    ...counts,
  }
}

describe('TokenizationGuard', () => {
  it('is Unknown until it has compared anything, then True while counts agree', () => {
    const guard = new TokenizationGuard({ minObservations: 3 })
    expect(guard.condition(t0)).toMatchObject({ status: 'Unknown', reason: 'NotCompared' })
    for (let i = 0; i < 3; i++)
      expect(guard.observe(answer(i, t0 + i))).toEqual([
        { kind: 'prompt', agrees: true },
        { kind: 'cached', agrees: true },
      ])
    const agreed = guard.condition(t0 + 10)
    expect(agreed).toMatchObject({ status: 'True', reason: 'CountsAgree', example: null })
    expect(agreed.message).toBe(
      'prompt_tokens agreed on 3 of 3; cached_tokens agreed on 3 of 3 answered requests in the last 5m',
    )
    expect(agreed.lastTransitionMs).toBe(t0 + 10)
  })

  it('marks the pool past the prompt threshold with one example, and clears once counts agree again', () => {
    const guard = new TokenizationGuard({ minObservations: 4, maxPromptDisagreement: 0.25 })
    for (let i = 0; i < 3; i++) guard.observe(answer(i, t0 + i))
    // One in four is 25 %: not past the threshold.
    expect(guard.observe(answer(3, t0 + 3, { reportedPromptTokens: 131 }))).toContainEqual({
      kind: 'prompt',
      agrees: false,
    })
    expect(guard.condition(t0 + 4).status).toBe('True')
    guard.observe(answer(4, t0 + 5, { scorerPromptTokens: 120, reportedPromptTokens: 131 }))
    const marked = guard.condition(t0 + 6)
    expect(marked).toMatchObject({
      type: 'TokenizationAgrees',
      status: 'False',
      reason: 'PromptTokensDisagree',
      lastTransitionMs: t0 + 6,
      example: {
        kind: 'prompt',
        requestId: 'req-4',
        model: 'm',
        pod: 'pod-0',
        scorer: 120,
        reported: 131,
        atMs: t0 + 5,
      },
    })
    expect(marked.message).toBe(
      "the pods' usage.prompt_tokens differed from the scorer's count for 2 of 5 answered requests in the last 5m (more than 25%); e.g. request req-4 (model m) on pod pod-0: the scorer counted 120 prompt tokens, the pod 131",
    )
    // Still False later, with the time it turned False.
    expect(guard.condition(t0 + 7).lastTransitionMs).toBe(t0 + 6)
    // The window moves on: the old disagreements leave it, and enough new answers agree.
    const later = t0 + 6 * minute
    for (let i = 10; i < 14; i++) guard.observe(answer(i, later + i))
    expect(guard.condition(later + 20)).toMatchObject({
      status: 'True',
      reason: 'CountsAgree',
      lastTransitionMs: later + 20,
    })
  })

  it('keeps its status while the window holds too few comparisons', () => {
    const guard = new TokenizationGuard({ minObservations: 2 })
    guard.observe(answer(0, t0, { reportedPromptTokens: 90 }))
    guard.observe(answer(1, t0 + 1, { reportedPromptTokens: 90 }))
    expect(guard.condition(t0 + 2).status).toBe('False')
    // Ten minutes without an answer: nothing says the counts agree now.
    expect(guard.condition(t0 + 10 * minute)).toMatchObject({
      status: 'False',
      lastTransitionMs: t0 + 2,
    })
  })

  it('compares cached tokens within a block, and only what both sides know', () => {
    const guard = new TokenizationGuard({ minObservations: 2, maxCachedDisagreement: 0.5 })
    expect(
      guard.observe(answer(0, t0, { predictedCachedTokens: 64, reportedCachedTokens: 50 })),
    ).toContainEqual({ kind: 'cached', agrees: true })
    expect(
      guard.observe(answer(1, t0, { predictedCachedTokens: 64, reportedCachedTokens: 48 })),
    ).toContainEqual({ kind: 'cached', agrees: false })
    // Unknown sides are not compared: an estimate, no usage, an index not believed.
    expect(
      guard.observe(
        answer(2, t0, {
          scorerPromptTokens: null,
          reportedCachedTokens: null,
        }),
      ),
    ).toEqual([])
    expect(
      guard.observe(answer(3, t0, { reportedPromptTokens: null, predictedCachedTokens: null })),
    ).toEqual([])
    guard.observe(answer(4, t0, { predictedCachedTokens: 640, reportedCachedTokens: 0 }))
    const marked = guard.condition(t0 + 1)
    expect(marked).toMatchObject({
      status: 'False',
      reason: 'CachedTokensDisagree',
      example: { kind: 'cached', requestId: 'req-4', scorer: 640, reported: 0 },
    })
    expect(marked.message).toContain('2 of 3 answered requests')
    expect(marked.message).toContain('the scorer predicted 640 cached tokens, the pod reported 0')
  })

  it('refuses options out of range, naming them', () => {
    expect(() => new TokenizationGuard({ maxPromptDisagreement: 2 })).toThrow(
      /tokenization guard: maxPromptDisagreement must be a share between 0 and 1/,
    )
    expect(() => new TokenizationGuard({ windowMs: 0 })).toThrow(/windowMs/)
  })
})
