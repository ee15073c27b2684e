import type { ConfigSnapshot, SnapshotPool } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { KvIndex } from '../../shared/kv-index/kv-index.ts'
import { maxTokensOf, type OpenAiRequest } from '../../shared/openai/openai-request.ts'
import { PoolRouter, resolveModel } from '../../shared/routing/pool-router.ts'
import type { PodState } from '../../shared/state/pod-state.ts'
import { promptOf } from '../tokenizer/prompt-ids.ts'
import type { Tokenizer } from '../tokenizer/tokenizer.ts'

export interface PrefixReportDeps {
  snapshot: ConfigSnapshot
  /** The pods as the replicas reported them (StateReader.pods). */
  pods: readonly PodState[]
  /** The index the scorers share (read: lookups only). */
  index: Pick<KvIndex, 'lookup'>
  tokenizer: (name: string) => Tokenizer
  wallMs: number
}

export interface PrefixReport {
  pool: string
  model: string
  strategy: string
  promptTokens: number
  blocks: number
  chosen: string | null
  reason: string
  pods: {
    pod: string
    matchedBlocks: number
    matchedTokens: number
    trust: string | null
    predictedTtftMs: number | null
    kvCacheUsage: number | null
    waiting: number | null
  }[]
}

/**
 * Which pods hold how much of a prompt and where the pool's router would send it: the
 * pool serving the model in the live snapshot, its PoolRouter (the scorer's) with each pod
 * as the replicas reported it (readiness, trust, metrics, the fitted TTFT model), its
 * lookup in the shared index. This router has sent nothing itself, so every request the
 * pods report counts as another sender's.
 */
export async function prefixReport(
  deps: PrefixReportDeps,
  request: OpenAiRequest,
): Promise<PrefixReport> {
  const model = request.body.model ?? ''
  const [poolId, pool] = poolServing(deps.snapshot, model)
  const nowMs = performance.now()
  const router = new PoolRouter({
    name: pool.name,
    spec: pool.spec,
    index: deps.index as KvIndex,
    // Ties go to the first pod, so a report is the same each time it is asked.
    random: () => 0,
    indexNowMs: () => deps.wallMs,
    onError: () => {},
  })
  const pods = deps.pods.filter((pod) => pod.pool === poolId)
  for (const pod of pods) restorePod(router, pod, deps.wallMs, nowMs)
  const served = router.served(model)
  if (served === null) throw new KinfError('internal', `pool ${poolId} lost model ${model}`)
  const { ids, mmFeatures } = promptOf(deps.tokenizer(served.tokenizer), request)
  const prepared = router.prepare({
    id: 'inspect-prefix',
    model,
    promptIds: ids,
    mmFeatures,
    maxTokens: maxTokensOf(request) ?? router.expectedOutputTokens,
    cacheSalt: request.body.cache_salt ?? null,
    promptText: () =>
      request.kind === 'chat' ? JSON.stringify(request.body.messages) : String(request.body.prompt),
  })
  const lookup = await router.lookup(prepared)
  const route = router.score(lookup, nowMs)
  return {
    pool: poolId,
    model,
    strategy: router.strategy,
    promptTokens: ids.length,
    blocks: prepared.keys.length / 2,
    chosen: route.decision.pod,
    reason: route.decision.reason,
    pods: pods.map((pod) => ({
      pod: pod.pod,
      matchedBlocks: lookup.blocks.get(pod.pod) ?? 0,
      matchedTokens: router.matchedTokens(lookup, pod.pod),
      trust: route.candidates.find((c) => c.name === pod.pod)?.trust ?? null,
      predictedTtftMs: route.predictedTtftMs.get(pod.pod) ?? null,
      kvCacheUsage: pod.kvCacheUsage,
      waiting: pod.waiting,
    })),
  }
}

/** The pool whose served models (or their adapters) include `model`. */
function poolServing(snapshot: ConfigSnapshot, model: string): [string, SnapshotPool] {
  const pools = Object.entries(snapshot.pools)
  const found = pools.find(([, pool]) => resolveModel(pool.spec, model) !== null)
  if (found) return found
  const served = pools.flatMap(([, pool]) => pool.spec.models.map((m) => m.name))
  throw new KinfError(
    'not_found',
    `no pool of the live snapshot serves model "${model}" (served: ${served.join(', ') || 'none'})`,
  )
}

/** A pod as a replica reported it, on the router's clock (performance.now). */
function restorePod(router: PoolRouter, pod: PodState, wallMs: number, nowMs: number): void {
  router.addPod(pod.pod, nowMs)
  router.setIndexReady(pod.pod, pod.indexReady)
  router.restore(
    pod.pod,
    {
      healthy: pod.healthy,
      trust: pod.trust,
      drift: pod.drift,
      observations: pod.driftObservations,
      ttft: pod.ttft,
    },
    nowMs,
  )
  if (pod.metricsAtMs !== null && pod.running !== null && pod.waiting !== null)
    router.updateMetrics(
      pod.pod,
      { running: pod.running, waiting: pod.waiting, kvCacheUsage: pod.kvCacheUsage ?? 0 },
      nowMs - (wallMs - pod.metricsAtMs),
    )
}
