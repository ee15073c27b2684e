import type { Log } from '../../../shared/logging/log.ts'
import { requestIdPattern } from '../../../shared/openai/request-id.ts'
import type { DecisionEntry } from '../../../shared/state/decision-entry.ts'
import type { StateStore } from '../../../shared/state/state-store.ts'

export interface DecisionRecorderOptions {
  store: Pick<StateStore, 'appendDecisions'>
  /** How long an entry may wait before it is written (its batch's latency). */
  flushMs: number
  /** Entries waiting beyond this are dropped, oldest first (Redis down for long). */
  maxBuffered: number
  log: Log
  /** Entries lost, as they are (a counter). */
  onDropped?: (count: number) => void
}

export interface DecisionRecorder {
  /**
   * Queues an entry: no I/O, no await, never throws (the request's path pays ~nothing). An
   * entry whose ids are not request ids (validRequestId) is dropped, not written: the log's
   * size per request is bounded whoever records.
   */
  record(entry: DecisionEntry): void
  /** Writes what is queued now. */
  flush(): Promise<void>
  /** Entries dropped so far (buffer full, or a write failed). */
  readonly dropped: number
  close(): Promise<void>
}

/**
 * The decision log's writer: entries are queued in memory and written in batches by a
 * timer, one pipeline per batch, off the requests' path. A failed write drops its batch
 * (a log, not a ledger) and is reported once until writes succeed again.
 */
export function createDecisionRecorder(options: DecisionRecorderOptions): DecisionRecorder {
  let queued: DecisionEntry[] = []
  let timer: NodeJS.Timeout | null = null
  let writing: Promise<void> = Promise.resolve()
  let dropped = 0
  let failing = false

  const write = async (batch: DecisionEntry[]) => {
    try {
      await options.store.appendDecisions(batch)
      if (failing) options.log('decision log: writing again')
      failing = false
    } catch (error) {
      dropped += batch.length
      options.onDropped?.(batch.length)
      if (!failing)
        options.log(`decision log: ${(error as Error).message}; entries dropped`, {
          level: 'warn',
        })
      failing = true
    }
  }

  const flush = () => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    if (queued.length > 0) {
      const batch = queued
      queued = []
      writing = writing.then(() => write(batch))
    }
    return writing
  }

  return {
    record(entry) {
      if (!boundedIds(entry)) {
        dropped++
        options.onDropped?.(1)
        return
      }
      queued.push(entry)
      if (queued.length > options.maxBuffered) {
        queued.shift()
        dropped++
        options.onDropped?.(1)
      }
      if (timer === null) {
        timer = setTimeout(flush, options.flushMs)
        timer.unref()
      }
    },
    flush,
    get dropped() {
      return dropped
    },
    close: flush,
  }
}

function boundedIds(entry: DecisionEntry): boolean {
  if (!requestIdPattern.test(entry.requestId)) return false
  return entry.kind !== 'decided' || entry.clientRequestId === undefined
    ? true
    : requestIdPattern.test(entry.clientRequestId)
}
