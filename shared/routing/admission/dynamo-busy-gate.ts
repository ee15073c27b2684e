import { z } from 'zod'
import type { PodCandidate } from '../routing-strategy.ts'
import { type AdmissionGate, admitted } from './admission-gate.ts'

/**
 * Dynamo's busy thresholds. Dynamo ships them off (`--admission-control none`); the defaults
 * here are the values its request-rejection docs enable them with, since a peer "with its own
 * admission" has to have it on. null turns a criterion off, as leaving its flag unset does.
 */
export const DynamoBusyOptions = z.strictObject({
  activeDecodeBlocksThreshold: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .default(0.85)
    .describe(
      'A worker whose KV blocks in use exceed this fraction is busy (--active-decode-blocks-threshold).',
    ),
  activePrefillTokensThreshold: z
    .number()
    .min(0)
    .nullable()
    .default(10_000)
    .describe(
      'A worker with more prefill tokens than this in flight is busy (--active-prefill-tokens-threshold).',
    ),
  decodeBlocksSource: z
    .enum(['engine', 'router'])
    .default('engine')
    .describe(
      'engine: the KV use the worker reports (scraped metrics here), which Dynamo’s busy check reads since its fix of issue #7753. router: the router’s own in-flight tokens over KV capacity, the router-side value that raced with the engine’s until that fix.',
    ),
  overloadStatus: z
    .union([z.literal(529), z.literal(503)])
    .default(529)
    .describe(
      'What the frontend answers: 529 by default in its HTTP error mapping, 503 with DYN_HTTP_OVERLOAD_STATUS_CODE=503 (and in its docs).',
    ),
})

export type DynamoBusyOptionsInput = z.input<typeof DynamoBusyOptions>
type DynamoBusyConfig = z.output<typeof DynamoBusyOptions>

/** A worker's KV blocks in use as a fraction of its capacity; null when unknown. */
function decodeBlocksFraction(pod: PodCandidate, source: DynamoBusyConfig['decodeBlocksSource']) {
  if (source === 'engine') return pod.metrics?.kvCacheUsage ?? null
  const capacity = pod.memory?.capacityTokens ?? 0
  return capacity > 0 ? pod.load.activeTokens / capacity : null
}

/**
 * Dynamo's KvWorkerMonitor busy test: a worker is busy when either criterion is exceeded
 * (strictly); a criterion it lacks data for cannot make it busy. Prefill tokens are the
 * router's own accounting of what it sent and has not seen prefilled (Dynamo's active
 * sequences publish active_prefill_tokens; the engine does not).
 */
export function isDynamoBusy(pod: PodCandidate, config: DynamoBusyConfig): boolean {
  const prefill = config.activePrefillTokensThreshold
  if (prefill !== null && pod.load.pendingPrefillTokens > prefill) return true
  const blocks = config.activeDecodeBlocksThreshold
  const fraction = decodeBlocksFraction(pod, config.decodeBlocksSource)
  return blocks !== null && fraction !== null && fraction > blocks
}

/**
 * Dynamo's request rejection (docs: fault-tolerance/request-rejection.md, router-filtering.md):
 * busy workers leave the candidate set, and a request finds no worker when every one is busy,
 * which the frontend answers with overloadStatus, "All workers are busy, please retry later".
 * With no workers at all that is a different failure (no endpoint) and not this gate's: it
 * admits, and the route's own no-candidate decision stands. No Retry-After is sent.
 */
export function createDynamoBusyGate(options: DynamoBusyOptionsInput = {}): AdmissionGate {
  const config = DynamoBusyOptions.parse(options)
  return {
    name: 'Dynamo busy threshold',
    admit(route) {
      const { candidates } = route
      if (candidates.length === 0 || !candidates.every((pod) => isDynamoBusy(pod, config)))
        return admitted
      return {
        kind: 'refuse',
        status: config.overloadStatus,
        code: 'all_workers_busy',
        message: 'All workers are busy, please retry later (Dynamo busy threshold).',
        retryAfterSeconds: null,
      }
    },
  }
}
