import { hostname } from 'node:os'
import type { Log } from '../../shared/logging/log.ts'
import type { StateStore } from '../../shared/state/state-store.ts'
import type { EdgeDecisionLog } from '../../workers/app/edge-decision-log.ts'
import { createDecisionRecorder } from '../scorer/state/decision-recorder.ts'

/** The edge's decision log on Node, with what stops it. */
export interface EdgeDecisionRecorder extends EdgeDecisionLog {
  /** Writes what is queued now (tests; otherwise on a timer). */
  flush(): Promise<void>
  /** Writes what is left: after the edge stops, before the store closes. */
  close(): Promise<void>
}

/**
 * The decisions the edge makes alone (workers/app/edge-decision-log.ts), written to the
 * shared state's decision log as the scorer writes its own: queued, and appended in batches
 * off the requests' path by the scorer's recorder (decision-recorder.ts). Named
 * edge-<hostname> in the log unless told: a pod's name in a cluster.
 */
export function createEdgeDecisionRecorder(options: {
  store: Pick<StateStore, 'appendDecisions'>
  log: Log
  replica?: string
  /** How long an entry may wait before it is written (default 100 ms, as the scorer's). */
  flushMs?: number
}): EdgeDecisionRecorder {
  const recorder = createDecisionRecorder({
    store: options.store,
    flushMs: options.flushMs ?? 100,
    maxBuffered: 50_000,
    log: options.log,
  })
  return {
    replica: options.replica ?? `edge-${hostname()}`,
    record: (entry) => recorder.record(entry),
    flush: () => recorder.flush(),
    close: () => recorder.close(),
  }
}
