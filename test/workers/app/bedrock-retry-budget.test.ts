import { describe, expect, it } from 'vitest'
import { RetryBudget } from '../../../workers/app/bedrock-retry-budget.ts'

describe('RetryBudget', () => {
  it('lets a share of the calls in flight retry at once, never fewer than its minimum', () => {
    const budget = new RetryBudget({ percent: 20, minRetrying: 1 })
    const calls = Array.from({ length: 10 }, () => budget.begin())
    expect(calls.map((call) => call.retry())).toEqual([true, true, ...Array(8).fill(false)])
    // A call already retrying may go on; one that ends frees its place.
    expect(calls[0]?.retry()).toBe(true)
    calls[0]?.end()
    calls[0]?.end()
    expect(calls[2]?.retry()).toBe(false)
    calls[1]?.end()
    expect(calls[2]?.retry()).toBe(true)
  })

  it('allows the minimum however few calls are in flight', () => {
    const budget = new RetryBudget()
    const calls = Array.from({ length: 4 }, () => budget.begin())
    expect(calls.map((call) => call.retry())).toEqual([true, true, true, false])
  })
})
