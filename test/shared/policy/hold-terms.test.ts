import { describe, expect, it } from 'vitest'
import { ServiceLevel } from '../../../shared/crd/service-level.ts'
import { holdTermsOf } from '../../../shared/policy/hold-terms.ts'

describe('holdTermsOf', () => {
  it('leaves a rule without a service level, or one at band 0 that never holds, to the pool', () => {
    expect(holdTermsOf(undefined, undefined, 0)).toBeUndefined()
    expect(holdTermsOf(ServiceLevel.parse({ ttftMs: 2000 }), undefined, 0)).toBeUndefined()
  })

  it('gives the band, and a hold that ends at maxHoldMs or the objective, whichever is first', () => {
    expect(holdTermsOf(ServiceLevel.parse({ ttftMs: 2000, priority: 5 }), undefined, 0)).toEqual({
      band: 5,
    })
    const level = ServiceLevel.parse({
      ttftMs: 2000,
      maxHoldMs: 1500,
      allowHeader: true,
      minTtftMs: 100,
    })
    expect(holdTermsOf(level, undefined, 1_000)).toEqual({
      band: 0,
      deadlineMs: 2_500,
      expires: false,
    })
    // A client asking for 800 ms cannot be held past its objective.
    expect(holdTermsOf(level, 800, 1_000)).toMatchObject({ deadlineMs: 1_800 })
  })

  it('lets a request expire at the end of its hold unless its rule serves a miss anyway', () => {
    const terms = (whenUnattainable: string) =>
      holdTermsOf(
        ServiceLevel.parse({ ttftMs: 2000, maxHoldMs: 1000, whenUnattainable }),
        undefined,
        0,
      )
    expect(terms('Serve')?.expires).toBe(false)
    expect(terms('Shed')?.expires).toBe(true)
    expect(terms('Burst')?.expires).toBe(true)
    expect(terms('BurstOrShed')?.expires).toBe(true)
  })

  it('refuses a hold longer than the objective, and a band out of range', () => {
    expect(ServiceLevel.safeParse({ ttftMs: 2000, maxHoldMs: 2001 }).success).toBe(false)
    expect(ServiceLevel.safeParse({ ttftMs: 2000, priority: 101 }).success).toBe(false)
  })
})
