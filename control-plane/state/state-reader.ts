import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  type Decision,
  joinDecisions,
  type StoredDecisionEntry,
} from '../../shared/state/decision-entry.ts'
import { type DecisionSummary, summarizeDecisions } from '../../shared/state/decision-summary.ts'
import { mergePodViews, type PodState } from '../../shared/state/pod-state.ts'
import { mergePoolViews, type PoolState } from '../../shared/state/pool-state.ts'
import type { QuotaLedgerReader } from '../../shared/state/quota-ledger-reader.ts'
import { type QuotaUse, quotaAccountsOf, quotaUseOf } from '../../shared/state/quota-use.ts'
import { type SnapshotChange, snapshotChanges } from '../../shared/state/snapshot-changes.ts'
import type { DecisionQuery, StateStore } from '../../shared/state/state-store.ts'
import type {
  PublishedSnapshot,
  PublishedVersion,
  SnapshotRead,
} from '../config-store/published-snapshot.ts'

/** Where the live config is read: the config store (RedisSnapshotStore) or one in memory. */
export interface SnapshotSource {
  current(): Promise<SnapshotRead | null>
  read(version: number): Promise<SnapshotRead | null>
}

/** One snapshot, as if published once (a process without a config store: the status page). */
export function fixedSnapshotSource(published: PublishedSnapshot): SnapshotSource {
  const read: SnapshotRead = { ok: true, published }
  return {
    current: async () => read,
    read: async (version) => (version === published.version ? read : null),
  }
}

export interface StateReaderDeps {
  state: StateStore
  snapshots: SnapshotSource
  quotas: QuotaLedgerReader
  nowMs: () => number
}

export interface DecisionFilter extends DecisionQuery {
  tenant?: string
  /** A pool's id, or its name. */
  pool?: string
}

export interface DecisionsReport {
  decisions: Decision[]
  summary: DecisionSummary
  /** The last log id read, to follow from; null when the log is empty. */
  lastId: string | null
}

export interface SnapshotReport extends PublishedVersion {
  snapshot: ConfigSnapshot
  /** The version before it, when still kept, and what changed since. */
  previous: { version: number; changes: SnapshotChange[] } | null
}

/**
 * The read side of the shared state, for `kinfctl inspect` and the status page: pods and
 * pools' conditions merged over the live replicas, the decision log joined with the requests' ends, the
 * quota buckets now and the live snapshot. Reads only; never asks a scorer.
 */
export interface StateReader {
  pods(filter?: { pool?: string }): Promise<PodState[]>
  /** The pools' conditions (TokenizerReady, TokenizationAgrees), merged the same way. */
  pools(filter?: { pool?: string }): Promise<PoolState[]>
  decisions(filter?: DecisionFilter): Promise<DecisionsReport>
  /** The log's entries as stored, to follow it (createDecisionFollower joins them). */
  entries(query: DecisionQuery): Promise<{ entries: StoredDecisionEntry[]; lastId: string | null }>
  /** Every account the live snapshot limits; not_found when nothing was published. */
  quotas(): Promise<QuotaUse[]>
  /** The live snapshot; not_found when nothing was published. */
  snapshot(): Promise<SnapshotReport>
}

export function createStateReader(deps: StateReaderDeps): StateReader {
  const live = async (): Promise<SnapshotReport> => {
    const read = await deps.snapshots.current()
    if (read === null)
      throw new KinfError('not_found', 'no config snapshot has been published to this redis')
    if (!read.ok) throw read.error
    const { snapshot, version } = read.published
    const before = version > 1 ? await deps.snapshots.read(version - 1) : null
    return {
      ...read.published,
      previous:
        before?.ok === true
          ? { version: version - 1, changes: snapshotChanges(before.published.snapshot, snapshot) }
          : null,
    }
  }

  return {
    async pods(filter = {}) {
      const pods = mergePodViews(await deps.state.readPodViews(deps.nowMs()))
      return filter.pool === undefined ? pods : pods.filter((p) => poolMatches(p.pool, filter.pool))
    },

    async pools(filter = {}) {
      const pools = mergePoolViews(await deps.state.readPodViews(deps.nowMs()))
      return filter.pool === undefined
        ? pools
        : pools.filter((p) => poolMatches(p.pool, filter.pool))
    },

    async decisions(filter = {}) {
      const { tenant, pool, ...query } = filter
      const entries = await deps.state.readDecisions(query)
      const decisions = joinDecisions(entries).filter(
        (d) => (tenant === undefined || d.tenant === tenant) && poolMatches(d.pool, pool),
      )
      return {
        decisions,
        summary: summarizeDecisions(decisions),
        lastId: entries.at(-1)?.id ?? query.afterId ?? null,
      }
    },

    async entries(query) {
      const entries = await deps.state.readDecisions(query)
      return { entries, lastId: entries.at(-1)?.id ?? query.afterId ?? null }
    },

    async quotas() {
      const accounts = quotaAccountsOf((await live()).snapshot)
      const buckets = await deps.quotas.buckets(accounts.map((a) => a.account))
      return quotaUseOf(accounts, buckets, deps.nowMs())
    },

    snapshot: live,
  }
}

/** A pool named by id (namespace/name) or by name alone; anything when none is given. */
export function poolMatches(poolId: string, wanted: string | undefined): boolean {
  return wanted === undefined || poolId === wanted || poolId.split('/').at(-1) === wanted
}
