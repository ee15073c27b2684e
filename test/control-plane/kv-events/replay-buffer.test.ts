import { describe, expect, it } from 'vitest'
import { createReplayBuffer } from '../../../control-plane/kv-events/replay-buffer.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

const payload = (n: number) => new Uint8Array([n])
const seqs = (entries: { seq: bigint }[]) => entries.map((entry) => entry.seq)

describe('createReplayBuffer', () => {
  it('keeps the newest `capacity` entries, oldest first', () => {
    const ring = createReplayBuffer(3)
    expect(ring.since(0n)).toEqual([])
    for (let seq = 0; seq < 5; seq++) ring.push(BigInt(seq), payload(seq))
    expect(ring.size).toBe(3)
    expect(seqs(ring.since(0n))).toEqual([2n, 3n, 4n])
    expect(ring.since(0n).map((entry) => entry.payload[0])).toEqual([2, 3, 4])
    expect(seqs(ring.since(3n))).toEqual([3n, 4n])
    expect(seqs(ring.since(5n))).toEqual([])
  })

  it('returns a snapshot that later pushes do not change', () => {
    const ring = createReplayBuffer(2)
    ring.push(0n, payload(0))
    const snapshot = ring.since(0n)
    ring.push(1n, payload(1))
    ring.push(2n, payload(2))
    expect(seqs(snapshot)).toEqual([0n])
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses a capacity of %d', (capacity) => {
    expect(() => createReplayBuffer(capacity)).toThrow(KinfError)
  })
})
