import { z } from 'zod'
import { PoolStateView } from './pool-state.ts'

const Count = z.int().min(0)
const Trust = z.enum(['precise', 'approximate', 'load-only'])
const trustRank = { precise: 0, approximate: 1, 'load-only': 2 } as const

/** A pod's KV-event stream as one replica ingests it. */
export const PodEventsView = z.strictObject({
  /** The last batch applied (a decimal string: vLLM's seq is a 64-bit counter). */
  lastSeq: z.string().nullable(),
  /** Wall time the last batch was applied; null before the first one. */
  lastBatchAtMs: z.number().nullable(),
  batches: Count,
  replays: Count,
  gaps: Count,
  restarts: Count,
})
export type PodEventsView = z.infer<typeof PodEventsView>

/** One pod as one scorer replica sees it when it writes its view. */
export const PodView = z.strictObject({
  /** The pool's id (namespace/name, or its name for a pool given by hand). */
  pool: z.string().min(1),
  pod: z.string().min(1),
  strategy: z.string(),
  healthy: z.boolean(),
  /** The replica believes the pod's index (false while replaying, after a restart). */
  indexReady: z.boolean(),
  trust: Trust,
  drift: z.number().min(0),
  driftObservations: Count,
  /** Stored blocks the index holds for the pod; null when the index cannot say. */
  blocksIndexed: Count.nullable(),
  /** From the pod's last scraped /metrics; null when missing or stale. */
  kvCacheUsage: z.number().nullable(),
  running: Count.nullable(),
  waiting: Count.nullable(),
  /** Wall time of those metrics. */
  metricsAtMs: z.number().nullable(),
  /** This replica's own requests there, and those of them before their first token. */
  inFlight: Count,
  pending: Count,
  /** The pool's fitted TTFT model as this replica has it (one per pool, see PoolRouter). */
  ttft: z.strictObject({ overheadMs: z.number(), msPerToken: z.number(), observations: Count }),
  events: PodEventsView.nullable(),
})
export type PodView = z.infer<typeof PodView>

/** Everything one replica writes at once; it expires unless written again. */
export const ReplicaPodViews = z.strictObject({
  replica: z.string().min(1),
  writtenAtMs: z.number(),
  pods: z.array(PodView),
  /** Its pools' conditions (pool-state.ts); absent from a replica of an older version. */
  pools: z.array(PoolStateView).default([]),
})
export type ReplicaPodViews = z.infer<typeof ReplicaPodViews>

/** One pod with every live replica's view merged (mergePodViews). */
export interface PodState extends Omit<PodView, 'events'> {
  /** The replicas whose view went into this one. */
  replicas: string[]
  events: PodEventsView | null
}

/**
 * Per pod, the replicas' views merged: healthy only if every replica finds it so, the index
 * ready if any replica's ingest is (they share one index), the worst trust and drift,
 * metrics from the freshest scrape, load summed (each replica counts its own requests), the
 * TTFT model with the most observations, events from the replica furthest along, restarts as
 * the most any saw (they all see the same ones) and replays summed (each asks its own).
 */
export function mergePodViews(views: readonly ReplicaPodViews[]): PodState[] {
  const byPod = new Map<string, PodState>()
  for (const view of views) {
    for (const pod of view.pods) {
      const key = `${pod.pool}\n${pod.pod}`
      const known = byPod.get(key)
      byPod.set(
        key,
        known ? merged(known, pod, view.replica) : { ...pod, replicas: [view.replica] },
      )
    }
  }
  return [...byPod.values()].sort(
    (a, b) => a.pool.localeCompare(b.pool) || a.pod.localeCompare(b.pod),
  )
}

function merged(known: PodState, next: PodView, replica: string): PodState {
  const fresher = (next.metricsAtMs ?? -1) > (known.metricsAtMs ?? -1)
  return {
    ...known,
    replicas: [...known.replicas, replica],
    healthy: known.healthy && next.healthy,
    indexReady: known.indexReady || next.indexReady,
    trust: trustRank[next.trust] > trustRank[known.trust] ? next.trust : known.trust,
    drift: Math.max(known.drift, next.drift),
    driftObservations: known.driftObservations + next.driftObservations,
    blocksIndexed: maxOf(known.blocksIndexed, next.blocksIndexed),
    ...(fresher
      ? {
          kvCacheUsage: next.kvCacheUsage,
          running: next.running,
          waiting: next.waiting,
          metricsAtMs: next.metricsAtMs,
        }
      : {}),
    inFlight: known.inFlight + next.inFlight,
    pending: known.pending + next.pending,
    ttft: next.ttft.observations > known.ttft.observations ? next.ttft : known.ttft,
    events: mergedEvents(known.events, next.events),
  }
}

function mergedEvents(a: PodEventsView | null, b: PodEventsView | null): PodEventsView | null {
  if (a === null || b === null) return a ?? b
  const ahead = BigInt(b.lastSeq ?? -1) > BigInt(a.lastSeq ?? -1) ? b : a
  return {
    lastSeq: ahead.lastSeq,
    lastBatchAtMs: maxOf(a.lastBatchAtMs, b.lastBatchAtMs),
    batches: Math.max(a.batches, b.batches),
    replays: a.replays + b.replays,
    gaps: Math.max(a.gaps, b.gaps),
    restarts: Math.max(a.restarts, b.restarts),
  }
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null || b === null) return a ?? b
  return Math.max(a, b)
}
