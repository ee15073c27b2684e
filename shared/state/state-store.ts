import type { DecisionEntry, StoredDecisionEntry } from './decision-entry.ts'
import type { ReplicaPodViews } from './pod-state.ts'

/** Which log entries to read: from a time, or after an id already seen; oldest first. */
export interface DecisionQuery {
  /** Entries logged at or after this wall time. */
  sinceMs?: number
  /** Entries after this id (--follow, the status page's live table). */
  afterId?: string
  /** At most this many, the newest of those matching (default 1,000). */
  count?: number
}

/**
 * What the scorer replicas share about the pods and their decisions, for `kinfctl inspect`
 * and the status page. Two implementations pass one conformance suite: in Redis (several
 * replicas, inspect from anywhere) and in memory (one process). Times are passed in.
 */
export interface StateStore {
  /** Replaces this replica's view of its pods; it is gone after `ttlMs` unless written again. */
  writePodViews(views: ReplicaPodViews, ttlMs: number): Promise<void>
  /** Every replica's view still alive at `nowMs`, in no particular order. */
  readPodViews(nowMs: number): Promise<ReplicaPodViews[]>
  /** Appends to the decision log, in order; the log keeps about its last N entries. */
  appendDecisions(entries: readonly DecisionEntry[]): Promise<void>
  readDecisions(query: DecisionQuery): Promise<StoredDecisionEntry[]>
  close(): Promise<void>
}
