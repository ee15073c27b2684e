import type { KubernetesObject } from '@kubernetes/client-node'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ConfigReconciler,
  type SnapshotSink,
} from '../../../control-plane/controller/config-reconciler.ts'
import { createControllerMetrics } from '../../../control-plane/controller/controller-metrics.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { kinference, yamlObjects } from '../../support/controller/controller-fixture.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'

const runs = 600
const examples = [
  'platform.yaml',
  'burst-to-bedrock.yaml',
  'pii-stays-local.yaml',
  'tenant-limits.yaml',
].flatMap((file) => yamlObjects(`infra/k8s/examples/${file}`))
const kinds = [
  'InferencePool',
  'InferenceWorkerSet',
  'InferenceProvider',
  'GatewayBackend',
  'InferencePolicy',
]

interface Written {
  kind: string
  name: string
  status: Record<string, unknown> | null
}

/**
 * One reconcile as the leader over `objects` (what the informers' caches hold), with a
 * sink in memory: what it published, and the status it wrote for each object.
 */
async function reconcileOnce(objects: KubernetesObject[]) {
  const published: ConfigSnapshot[] = []
  const written: Written[] = []
  const logs: string[] = []
  const sink: SnapshotSink = {
    publish: async (snapshot) => {
      published.push(snapshot)
      return { version: published.length, changed: true }
    },
    live: async () => null,
  }
  const reconciler = new ConfigReconciler({
    objects: (kind) => objects.filter((o) => o.kind === kind),
    sink,
    writeStatus: async (kind, object, compute) => {
      const existing = (object as { status?: unknown }).status
      written.push({
        kind: kind.kind,
        name: String(object.metadata?.name),
        status: compute(existing),
      })
      return 'written'
    },
    isLeader: () => true,
    metrics: createControllerMetrics(() => 0),
    log: (line) => logs.push(line),
    nowMs: () => 1_790_000_000_000,
    retryLater: () => {},
    emitEvent: async () => {},
  })
  await reconciler.reconcile()
  return { published, written, logs }
}

const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-1, 2 ** 53, 1e308, '', 'x'.repeat(5_000), [], {}, null, '__proto__'),
)
/**
 * An example object with one field of its spec or status (at any depth) changed; metadata
 * is the API server's, whose names are always strings.
 */
const mutatedObject = fc
  .tuple(
    fc.constantFrom(...examples),
    fc.array(fc.string({ maxLength: 12 }), { maxLength: 3 }),
    fc.constantFrom('spec', 'status'),
    anyValue,
    fc.nat(),
  )
  .map(([object, keys, root, value, pick]) => {
    const copy = structuredClone(object) as Record<string, unknown>
    let at = copy as Record<string, unknown>
    const existing = Object.keys((copy[root] as object | undefined) ?? {})
    const path = [
      root,
      ...(existing.length > 0 ? [existing[pick % existing.length] as string] : []),
      ...keys,
    ]
    for (const key of path.slice(0, -1)) {
      if (typeof at[key] !== 'object' || at[key] === null) at[key] = {}
      at = at[key] as Record<string, unknown>
    }
    at[path[path.length - 1] as string] = value
    return copy as KubernetesObject
  })
/**
 * Objects no valid CRD would let through (an older or loosened schema can): any spec and
 * status, under what the API server guarantees (the group, a kind, a DNS name).
 */
const arbitraryObject = fc.record({
  apiVersion: fc.constant(kinference),
  kind: fc.constantFrom(...kinds),
  metadata: fc.record(
    {
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      namespace: fc.constantFrom('kinference', 'default'),
      generation: fc.nat(),
      labels: fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.string({ maxLength: 5 })),
    },
    { requiredKeys: ['name', 'namespace'] },
  ),
  spec: fc.oneof(fc.object({ maxDepth: 3 }), anyValue),
  status: fc.oneof(
    fc.constant(undefined),
    anyValue,
    fc.record({ conditions: fc.array(fc.object({ maxDepth: 1 }), { maxLength: 3 }) }),
  ),
}) as fc.Arbitrary<KubernetesObject>
const objects = fc.tuple(
  fc.subarray(examples),
  fc.array(mutatedObject, { maxLength: 3 }),
  fc.array(arbitraryObject, { maxLength: 2 }),
)

describe('fuzz: the controller’s reconcile over arbitrary resources', () => {
  it(
    'never throws; gives every resource an Accepted condition, with the problems when it is rejected',
    async () => {
      await fc.assert(
        fc.asyncProperty(objects, async ([valid, mutated, arbitrary]) => {
          const all = [...valid, ...mutated, ...arbitrary] as KubernetesObject[]
          const { written } = await reconcileOnce(all)
          expect(written.length).toBe(all.length)
          for (const { status } of written) {
            expect(status).not.toBeNull()
            const conditions = (status as { conditions: Record<string, unknown>[] }).conditions
            const accepted = conditions.find((c) => c.type === 'Accepted')
            expect(['True', 'False']).toContain(accepted?.status)
            expect(typeof accepted?.reason).toBe('string')
            if (accepted?.status === 'False')
              expect(String(accepted.message).length).toBeGreaterThan(0)
          }
        }),
        fuzzParameters(runs, 15_035),
      )
    },
    fuzzTimeoutMs(runs),
  )
})
