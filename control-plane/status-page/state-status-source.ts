import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { Decision } from '../../shared/state/decision-entry.ts'
import { createDecisionFollower } from '../../shared/state/decision-follower.ts'
import { escapeControls } from '../../shared/state/escape-controls.ts'
import { isExternalDecision } from '../../shared/state/external-strategy.ts'
import type { PodState } from '../../shared/state/pod-state.ts'
import type { PoolState } from '../../shared/state/pool-state.ts'
import type { QuotaUse } from '../../shared/state/quota-use.ts'
import type { StateReader } from '../state/state-reader.ts'
import type { StatusSource } from './status-page-routes.ts'
import type { DecisionView, StatusPodView, StatusView, TenantView } from './status-view.ts'

/** Decisions the page's hit rates are taken over, and the live table starts with. */
const recentDecisions = 500

/**
 * The status page's numbers from the shared state (the reader kinfctl inspect uses), so
 * the page and `kinfctl inspect` cannot disagree: pods merged over the live replicas,
 * quotas and the live snapshot; the decision log polled every `pollMs` for new decisions
 * and for ends of those already shown.
 */
export function stateStatusSource(
  reader: StateReader,
  options: {
    pollMs: number
    nowMs: () => number
    /** The quota ledgers can be read (false: the edge keeps them in its own memory). */
    quotasKnown: boolean
  },
): StatusSource {
  return {
    async status() {
      const [pods, pools, recent, tenants, snapshot] = await Promise.all([
        reader.pods(),
        reader.pools(),
        reader.decisions({ count: recentDecisions }),
        options.quotasKnown ? orNone(reader.quotas(), []) : [],
        orNone(reader.snapshot(), null),
      ])
      return {
        generatedAtMs: options.nowMs(),
        snapshot: snapshot && {
          version: snapshot.version,
          hash: snapshot.hash,
          publishedAtMs: snapshot.publishedAt,
        },
        pools: poolsOf(pods, pools, recent.decisions, options.nowMs()),
        tenants: tenants.map(tenantOf),
      }
    },
    decisions: (signal) => followDecisions(reader, options.pollMs, signal),
  }
}

/** Nothing published yet is a state the page shows, not an error. */
async function orNone<T, F>(read: Promise<T>, none: F): Promise<T | F> {
  try {
    return await read
  } catch (error) {
    if (KinfError.isInstance(error) && error.code === 'not_found') return none
    throw error
  }
}

/** Pools with pods, and those with conditions but no pod; text from the state escaped. */
function poolsOf(
  pods: PodState[],
  states: PoolState[],
  decisions: Decision[],
  nowMs: number,
): StatusView['pools'] {
  const pools = new Map<string, StatusView['pools'][number]>()
  const poolOf = (name: string, strategy: string | null) => {
    let pool = pools.get(name)
    if (!pool) {
      pool = { name, strategy, conditions: [], pods: [] }
      pools.set(name, pool)
    }
    return pool
  }
  for (const pod of pods) poolOf(pod.pool, pod.strategy).pods.push(podOf(pod, decisions, nowMs))
  for (const state of states)
    poolOf(state.pool, null).conditions = state.conditions.map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: escapeControls(c.message),
      lastTransitionMs: c.lastTransitionMs,
      example: c.example && {
        kind: c.example.kind,
        requestId: escapeControls(c.example.requestId),
        model: escapeControls(c.example.model),
        pod: escapeControls(c.example.pod),
        scorer: c.example.scorer,
        reported: c.example.reported,
      },
    }))
  return [...pools.values()]
}

function podOf(pod: PodState, decisions: Decision[], nowMs: number): StatusPodView {
  const reported = decisions.filter(
    (d) => d.pool === pod.pool && d.pod === pod.pod && d.end?.cachedTokens != null,
  )
  const prompt = reported.reduce((n, d) => n + d.promptTokens, 0)
  const cached = reported.reduce((n, d) => n + (d.end?.cachedTokens ?? 0), 0)
  return {
    name: pod.pod,
    ready: pod.healthy && pod.indexReady,
    trust: pod.trust,
    drift: pod.drift,
    kvCacheUsage: pod.kvCacheUsage,
    waiting: pod.waiting,
    running: pod.running,
    blocksIndexed: pod.blocksIndexed,
    hitRate: prompt > 0 ? cached / prompt : null,
    ttft: { overheadMs: pod.ttft.overheadMs, msPerToken: pod.ttft.msPerToken },
    lastEventAgeMs:
      pod.events?.lastBatchAtMs != null ? Math.max(0, nowMs - pod.events.lastBatchAtMs) : null,
  }
}

/** A bucket's use is what its capacity lacks now (debt counts beyond the limit). */
function tenantOf(use: QuotaUse): TenantView {
  const buckets = [
    ['requests/min', use.requests],
    ['tokens/min', use.tokens],
  ] as const
  return {
    tenant: use.account,
    buckets: buckets.flatMap(([name, bucket]) =>
      bucket ? [{ name, used: bucket.capacity - bucket.available, limit: bucket.capacity }] : [],
    ),
  }
}

/**
 * A decision as the page shows it. Its id (the page's row key) is the request id the edge
 * or the scorer made, never the client's x-request-id: two tenants sending the same one
 * get a row each. Text from the log has its control characters written out (escapeControls).
 */
export function decisionViewOf(d: Decision): DecisionView {
  const text = (value: string | null) => (value === null ? null : escapeControls(value))
  return {
    id: escapeControls(d.requestId),
    atMs: d.atMs,
    tenant: text(d.tenant),
    rule: text(d.rule),
    backend: text(d.backend),
    pool: escapeControls(d.pool),
    pod: escapeControls(d.pod),
    strategy: escapeControls(d.strategy),
    // An external provider's: no pod was asked, so nothing was matched or predicted.
    matchedTokens: isExternalDecision(d) ? null : d.matchedTokens,
    predictedTtftMs: isExternalDecision(d) ? null : d.predictedTtftMs,
    actualTtftMs: d.end?.ttftMs ?? null,
    cachedTokens: d.end?.cachedTokens ?? null,
    outputTokens: d.end?.outputTokens ?? null,
    outcome: text(d.end?.outcome ?? null),
  }
}

/**
 * The latest decisions, then each new one as it is logged and each again once it ends:
 * the log is read on from the last entry seen every `pollMs` (the follower kinfctl inspect
 * --follow uses joins the ends to their decisions).
 */
async function* followDecisions(
  reader: StateReader,
  pollMs: number,
  signal: AbortSignal,
): AsyncGenerator<DecisionView> {
  const first = await reader.decisions({ count: recentDecisions })
  let ready: Decision[] = []
  const follower = createDecisionFollower(
    () => true,
    undefined,
    (d) => ready.push(d),
  )
  for (const decision of first.decisions) {
    follower.follow(decision)
    yield decisionViewOf(decision)
  }
  let lastId = first.lastId
  while (!signal.aborted) {
    await pause(pollMs, signal)
    if (signal.aborted) return
    const read = await reader.entries(lastId === null ? {} : { afterId: lastId })
    lastId = read.lastId
    const done = follower.push(read.entries, Date.now())
    const batch = [...ready, ...done]
    ready = []
    for (const decision of batch) yield decisionViewOf(decision)
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}
