import { describe, expect, it } from 'vitest'
import {
  eppControllerName,
  upstreamParentEntry,
  withOurParent,
} from '../../../control-plane/controller/upstream-pool-status.ts'

const theirs = (name: string) => ({
  parentRef: { name, kind: 'Gateway' },
  controllerName: 'example.net/gateway',
  conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: name }],
})
const ours = (mark: string) => ({ controllerName: eppControllerName, mark })

describe('withOurParent', () => {
  it('adds ours last, replaces it in place, and leaves the other entries as they are', () => {
    const added = withOurParent({ parents: [theirs('a')], other: 1 }, () => ours('new'))
    expect(added).toEqual({ parents: [theirs('a'), ours('new')], other: 1 })
    const replaced = withOurParent({ parents: [ours('old'), theirs('a')] }, () => ours('new'))
    expect(replaced).toEqual({ parents: [ours('new'), theirs('a')] })
  })

  it('removes ours, dropping the list when it was the only entry, and writes nothing unchanged', () => {
    expect(withOurParent({ parents: [theirs('a'), ours('x')] }, null)).toEqual({
      parents: [theirs('a')],
    })
    expect(withOurParent({ parents: [ours('x')], other: 1 }, null)).toEqual({ other: 1 })
    expect(withOurParent({ parents: [theirs('a')] }, null)).toBeNull()
    expect(withOurParent(undefined, null)).toBeNull()
    expect(withOurParent({ parents: [ours('x')] }, () => ours('x'))).toBeNull()
  })

  it('does not add a 33rd entry', () => {
    const full = { parents: Array.from({ length: 32 }, (_, i) => theirs(`g${i}`)) }
    expect(withOurParent(full, () => ours('new'))).toBeNull()
  })
})

describe('upstreamParentEntry', () => {
  const facts = {
    outcome: { served: 'default' as const, poolId: 'ns/p', key: 'InferencePool/ns/p' },
    generation: 4,
    verdict: {
      accepted: true,
      resolvedRefs: 'True' as const,
      problems: [],
      carried: 'current' as const,
    },
    carriedGeneration: null,
    resolved: {
      endpoints: {},
      counts: { 'InferencePool/ns/p': { pods: 0, ready: 0 } },
      issues: [],
    },
  }
  const ref = { service: 'epp', namespace: 'ns' }

  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const first = upstreamParentEntry(facts, ref, undefined, '2026-01-01T00:00:00.000Z')
    expect(first.parentRef).toEqual({ group: '', kind: 'Service', name: 'epp', namespace: 'ns' })
    expect(first.conditions).toEqual([
      expect.objectContaining({ type: 'Accepted', status: 'True', observedGeneration: 4 }),
      expect.objectContaining({
        type: 'ResolvedRefs',
        status: 'False',
        reason: 'InvalidExtensionRef',
        message: 'no pod matches spec.selector',
        lastTransitionTime: '2026-01-01T00:00:00.000Z',
      }),
    ])
    const withPods = {
      ...facts,
      resolved: { ...facts.resolved, counts: { 'InferencePool/ns/p': { pods: 1, ready: 1 } } },
    }
    const later = upstreamParentEntry(withPods, ref, first, '2026-01-02T00:00:00.000Z')
    const [accepted, resolved] = later.conditions as Record<string, unknown>[]
    expect(accepted?.lastTransitionTime).toBe('2026-01-01T00:00:00.000Z')
    expect(resolved).toMatchObject({
      status: 'True',
      lastTransitionTime: '2026-01-02T00:00:00.000Z',
    })
  })

  it('says why a referring pool that is not accepted leaves the pool unresolved', () => {
    const entry = upstreamParentEntry(
      {
        ...facts,
        outcome: { served: 'referred', poolId: 'ns/k', key: 'InferencePool/ns/k' },
        verdict: {
          accepted: false,
          resolvedRefs: 'Unknown',
          problems: ['spec.selector: not allowed with upstreamPoolRef'],
          carried: 'previous',
        },
        carriedGeneration: 3,
      },
      ref,
      undefined,
      '2026-01-01T00:00:00.000Z',
    )
    expect((entry.conditions as Record<string, unknown>[])[1]).toMatchObject({
      status: 'False',
      reason: 'InvalidExtensionRef',
      message:
        'InferencePool.kinference.dev ns/k is not accepted (spec.selector: not allowed with upstreamPoolRef); its generation 3 stays live',
    })
  })
})
