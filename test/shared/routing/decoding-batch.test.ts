import { describe, expect, it } from 'vitest'
import { DecodingBatch } from '../../../shared/routing/decoding-batch.ts'

describe('DecodingBatch', () => {
  it('integrates its context from each change on, and not backwards', () => {
    const batch = new DecodingBatch()
    expect(batch.integral(0)).toBe(0)
    batch.add(1_000, 100)
    batch.add(500, 300)
    expect(batch.tokens).toBe(1_500)
    // 0 for 100 ms, 1000 for 200 ms, 1500 for 100 ms.
    expect(batch.integral(400)).toBe(200_000 + 150_000)
    expect(batch.integral(350)).toBe(350_000)
    // Without a time, the change counts from the last reading.
    batch.add(-1_500)
    expect(batch.integral(1_000)).toBe(350_000)
  })
})
