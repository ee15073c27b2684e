import { describe, expect, it } from 'vitest'
import { HostLink } from '../../../../../control-plane/lab/sim/engine/host-link.ts'

describe('HostLink', () => {
  it('takes bytes / bandwidth, queued behind the transfers before it in the same direction', () => {
    const link = new HostLink(25e9)
    // 800 tokens of 131,072 bytes (the reference profile's FP8 KV cache): 4.19 ms.
    expect(link.transfer('load', 100, 800 * 131_072)).toBeCloseTo(104.194304, 9)
    expect(link.transfer('load', 101, 25e6)).toBeCloseTo(105.194304, 9)
    // After an idle gap, a transfer starts when it is asked for.
    expect(link.transfer('load', 200, 25e6)).toBeCloseTo(201, 9)
  })

  it('runs the two directions side by side', () => {
    const link = new HostLink(1e9)
    expect(link.transfer('store', 0, 5e6)).toBe(5)
    expect(link.transfer('load', 0, 1e6)).toBe(1)
    expect(link.transfer('store', 0, 1e6)).toBe(6)
  })
})
