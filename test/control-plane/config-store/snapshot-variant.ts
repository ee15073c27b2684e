import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { exampleSnapshot } from '../../shared/policy/example-snapshot.ts'

const cache = new Map<number, Promise<ConfigSnapshot>>()

/** infra/k8s/examples compiled, with one pool's TTFT SLO set to 1000 + n: a distinct hash each. */
export function snapshotVariant(n: number): Promise<ConfigSnapshot> {
  let snapshot = cache.get(n)
  if (!snapshot) {
    snapshot = exampleSnapshot((documents) => {
      const pool = documents.find((doc) => (doc as { kind?: string }).kind === 'InferencePool') as {
        spec: { ttftSloMs: number }
      }
      pool.spec.ttftSloMs = 1000 + n
    })
    cache.set(n, snapshot)
  }
  return snapshot
}
