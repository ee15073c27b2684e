import { describe, expect, it } from 'vitest'
import { defaultKeyPrefix } from '../../../shared/protocol/key-prefix.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import { kvSnapshotKey } from '../../../shared/protocol/kv-snapshot-key.ts'
import { quotaBucketFields, quotaKeys } from '../../../shared/protocol/quota-keys.ts'

/**
 * What deployed edges, scorers, stores and operators' scripts already rely on: changing
 * any of these strands data written under the old names or breaks an older peer.
 */
describe('protocol constants', () => {
  it('keep the keys published snapshots and quotas live under', () => {
    expect(kvSnapshotKey).toBe('snapshot')
    expect(defaultKeyPrefix).toBe('kinf:')
    const keys = quotaKeys(defaultKeyPrefix)
    expect(keys.buckets('acme')).toBe('kinf:quota:{acme}')
    expect(keys.reservation('acme', 'r-1')).toBe('kinf:quota:{acme}:r:r-1')
    expect(Object.values(quotaBucketFields)).toEqual(['rl', 'ru', 'tl', 'tu'])
  })

  it('keep the header names clients and the scorer use', () => {
    expect(kinferenceHeaders).toEqual({
      labels: 'x-kinference-labels',
      decision: 'x-kinference-decision',
      reason: 'x-kinference-reason',
      fallback: 'x-kinference-fallback',
      saturated: 'x-kinference-saturated',
    })
  })
})
