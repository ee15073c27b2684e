import type { PodEventIngestorOptionsInput } from '../../../control-plane/kv-feeds/pod-event-ingestor.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'

/**
 * A PodEventIngestor's options for pod-a serving model-a, on a fresh memory index, with no
 * replay endpoint and nothing heard of readiness or errors, unless `overrides` says.
 */
export function ingestorOptions(
  overrides: Partial<PodEventIngestorOptionsInput> = {},
): PodEventIngestorOptionsInput {
  return {
    pod: 'pod-a',
    model: 'model-a',
    index: createMemoryKvIndex(),
    replayEndpoint: null,
    onReady: () => {},
    onError: () => {},
    ...overrides,
  }
}
