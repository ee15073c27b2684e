import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { CloudflareKvPublisher } from '../config-store/cloudflare-kv-publisher.ts'
import type { RedisSnapshotStore } from '../config-store/redis-snapshot-store.ts'
import type { SnapshotSink } from './config-reconciler.ts'
import type { ControllerMetrics } from './controller-metrics.ts'

/**
 * Publishing as the controller does it: Redis numbers the version and tells the scorers
 * and Node edges; Workers KV then gets the same snapshot for the Worker. A KV failure
 * fails the publish (and so is retried) even though Redis already holds the version:
 * Redis publishing the same hash again is a no-op.
 */
export function createSnapshotSink(options: {
  store: RedisSnapshotStore
  cloudflare: CloudflareKvPublisher | null
  metrics: ControllerMetrics
  nowMs: () => number
}): SnapshotSink {
  let kvHash: string | null = null
  return {
    async publish(snapshot: ConfigSnapshot) {
      const result = await options.store
        .publish(snapshot, options.nowMs())
        .catch((error: unknown) => {
          options.metrics.publishFailures.labels({ target: 'redis' }).inc()
          throw error
        })
      if (options.cloudflare && kvHash !== snapshot.hash) {
        const written = await options.cloudflare.publish(snapshot, result.version)
        if (!written.ok) {
          options.metrics.publishFailures.labels({ target: 'cloudflare-kv' }).inc()
          throw new KinfError('upstream_error', `Workers KV: ${written.error.message}`)
        }
        kvHash = snapshot.hash
      }
      return result
    },
    async live() {
      // Reading what is live is the first step of publishing: its failure counts as one.
      const read = await options.store.current().catch((error: unknown) => {
        options.metrics.publishFailures.labels({ target: 'redis' }).inc()
        throw error
      })
      if (read === null) return null
      if (!read.ok) throw read.error
      return { version: read.published.version, snapshot: read.published.snapshot }
    },
  }
}
