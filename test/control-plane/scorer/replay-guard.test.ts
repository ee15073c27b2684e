import { describe, expect, it } from 'vitest'
import { ReplayGuard } from '../../../control-plane/scorer/replay-guard.ts'

describe('ReplayGuard', () => {
  it('refuses a nonce it has seen, until the signature would have expired anyway', () => {
    const guard = new ReplayGuard()
    guard.admit('a', 130, 100)
    expect(() => guard.admit('a', 131, 101)).toThrow(/replayed nonce/)
    guard.admit('b', 131, 101)
    // Past a's expiry its signature is refused for its timestamp: the nonce can go.
    guard.admit('c', 170, 140)
    expect(guard.size).toBe(1)
    guard.admit('a', 171, 141)
  })

  it('refuses new requests at its bound rather than forgetting nonces early', () => {
    const guard = new ReplayGuard(2)
    guard.admit('a', 130, 100)
    guard.admit('b', 130, 100)
    expect(() => guard.admit('c', 130, 100)).toThrow(/too many signed requests/)
    guard.admit('c', 200, 131)
  })
})
