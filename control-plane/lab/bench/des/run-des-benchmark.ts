import type { InferencePoolSpec } from '../../../../shared/crd/inference-pool.ts'
import { type GpuProfile, numGpuBlocks } from '../../../../shared/gpu/gpu-profile.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import { createMemoryTierHoldings } from '../../../../shared/kv-index/memory-tier-holdings.ts'
import { TierLookup } from '../../../../shared/kv-index/tier-lookup.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'
import {
  type HoldTerms,
  PoolRouter,
  type RouteResult,
} from '../../../../shared/routing/pool-router.ts'
import type { StrategyRegistry } from '../../../../shared/routing/strategies/define-strategy.ts'
import type { StableVocabulary } from '../../../../shared/tokens/create-stable-vocabulary.ts'
import { AttentionGroup } from '../../../kv-events/attention-group.ts'
import { toPodEvents } from '../../../kv-events/to-pod-events.ts'
import {
  SimKvEventsOptions,
  type SimKvEventsOptionsInput,
} from '../../sim/engine/kv-events-options.ts'
import { VllmEngine } from '../../sim/engine/vllm-engine.ts'
import { wireEventMapper } from '../../sim/to-wire-event.ts'
import { type ChatFrame, type ChatTurnIds, chatPromptIds } from '../chat-prompt-ids.ts'
import { describeProfile, type LoadProfile, rateOfProfile, streamsOf } from '../load-profile.ts'
import { openLoopSchedule } from '../open-loop-schedule.ts'
import type { BenchmarkRun, RequestRecord } from '../request-record.ts'
import { type PlannedConversation, randomWords, type Workload } from '../workload.ts'
import {
  type AdmissionStep,
  DesAdmission,
  type DesAdmissionOptionsInput,
  providerRecord,
  refusedRecord,
} from './des-admission.ts'
import {
  type Arrival,
  baseRecord,
  type InFlight,
  type PendingTurn,
  type Pod,
  type SimEvent,
} from './des-run-parts.ts'
import { type DesTimingOptionsInput, parseDesTimingOptions } from './des-timing-options.ts'
import { EventQueue } from './event-queue.ts'
import { ScorerReplicas } from './scorer-replicas.ts'
import { asText, silentAnswer } from './synthetic-text.ts'

export interface DesOptions extends DesTimingOptionsInput {
  /** Scorer replicas sharing the KV index (default 1). */
  replicas?: number
  pods: number
  gpuProfile: GpuProfile
  /** The pool as the scorer would run it: strategy and parameters, block size, SLO. */
  pool: InferencePoolSpec
  workload: Workload
  workloadName: string
  dataSpec: string
  load: LoadProfile
  maxRequests: number
  seed: number
  frame: ChatFrame
  vocabulary: StableVocabulary
  /** The KV-event variants of vLLM the pods run (CPU offload, a hybrid model, …); vLLM's defaults when absent. */
  kvEvents?: SimKvEventsOptionsInput
  onProgress?: (done: number) => void
  /** Where the pool's routing strategy is found: the built-ins unless given. */
  strategies?: StrategyRegistry
  /** Objectives, admission and bursting (DesAdmission); absent: every request goes to the pool. */
  admission?: DesAdmissionOptionsInput
}

/**
 * The benchmark in virtual time: each pod is the simulator's engine, the router is the
 * scorer's routing core (same strategy, TTFT model, index trust and accounting) over the
 * in-memory index, fed by the engines' KV events after `eventDelayMs` and by their
 * metrics every `metricsIntervalMs`. Requests are the workload's conversations under the
 * load profile. Deterministic for a seed; nothing here reads a clock.
 */
export async function runDesBenchmark(options: DesOptions): Promise<BenchmarkRun> {
  const started = performance.now()
  const timing = parseDesTimingOptions(options)
  const eventDelay = timing.eventDelayMs
  const scrapeEvery = timing.metricsIntervalMs
  const scrapeDelay = timing.metricsDelayMs
  const network = timing.networkDelayMs
  const queue = new EventQueue<SimEvent>()
  const routerRandom = createSeededRandom(options.seed ^ 0x5bd1e995)
  const outputRandom = createSeededRandom(options.seed ^ 0x27d4eb2d)
  // Drawn only when events are lost, so runs without loss are as before.
  const lossRandom = createSeededRandom(options.seed ^ 0x1b873593)
  const kvEvents = SimKvEventsOptions.parse(options.kvEvents ?? {})
  // Pods with a CPU tier: its events reach tier holdings and the routers look it up, as in
  // the scorer (start-scorer.ts); without one, nothing changes.
  const tiers = kvEvents.cpuOffload ? new TierLookup(createMemoryTierHoldings()) : null
  const index = tiers ? tiers.index(createMemoryKvIndex()) : createMemoryKvIndex()
  // The index's clock is the simulation's: `now` follows the event being handled.
  let now = 0
  const replicaCount = Math.max(1, options.replicas ?? 1)
  // Replica 0 draws what the single router always drew, so one replica is today's run.
  const replicas = new ScorerReplicas(
    Array.from(
      { length: replicaCount },
      (_, r) =>
        new PoolRouter<Arrival>({
          name: 'bench',
          spec: options.pool,
          index,
          ...(tiers ? { tiers } : {}),
          random:
            r === 0 ? routerRandom : createSeededRandom((options.seed ^ 0x5bd1e995) + r * 7_919),
          indexNowMs: () => now,
          onError: (message) => {
            throw new Error(message)
          },
          ...(options.strategies ? { strategies: options.strategies } : {}),
        }),
    ),
    createSeededRandom(options.seed ^ 0x68e31da4),
  )
  const model = options.pool.models[0]?.name ?? ''
  // Drawn only with admission, so runs without it are as before.
  const admission = options.admission
    ? new DesAdmission(
        options.admission,
        options.pool.routing.strategy,
        options.seed,
        createSeededRandom(options.seed ^ 0x2545f491),
      )
    : null
  // What the pods publish, in their configured form (groups, extra keys), as the scorer
  // would decode it.
  const toWire = wireEventMapper(kvEvents)
  const pods: Pod[] = Array.from({ length: options.pods }, (_, i) => ({
    name: `pod-${i}`,
    engine: new VllmEngine({
      profile: options.gpuProfile,
      random: createSeededRandom(options.seed * 7919 + i),
      kvEvents,
    }),
    stepping: false,
    seq: 0n,
    groups: new AttentionGroup(),
  }))
  const podIndex = new Map(pods.map((pod, i) => [pod.name, i]))
  const capacity = numGpuBlocks(options.gpuProfile) * options.gpuProfile.blockSize
  for (const router of replicas.all)
    for (const pod of pods) {
      router.addPod(pod.name, 0)
      router.setIndexReady(pod.name, true)
    }

  // Plans are regenerated from the seed on demand; keep the ones in progress.
  const plans = new Map<number, PlannedConversation>()
  const planOf = (index: number) => {
    let plan = plans.get(index)
    if (!plan) {
      plan = options.workload.conversation(index)
      plans.set(index, plan)
    }
    return plan
  }
  const multiTurn = options.workload.turns > 1
  // A trace slice can hold fewer requests than asked for (it skips what does not fit).
  const maxRequests = Math.min(
    options.maxRequests,
    options.workload.size ?? Number.POSITIVE_INFINITY,
  )
  const records: RequestRecord[] = []
  const inFlight = new Map<string, InFlight>()
  let sent = 0
  let done = 0
  let nextConversation = 0
  let lastEnd = 0

  /** Queue the request for conversation `conversation`, turn `turn` at `time`. */
  const send = (time: number, conversation: number, turn: number, history: ChatTurnIds[]) => {
    if (sent >= maxRequests) return
    sent++
    queue.push(time, { kind: 'send', turn: { conversation, turn, history } })
  }
  const startConversation = (time: number) => {
    if (sent >= maxRequests) return
    send(time, nextConversation++, 0, [])
  }

  const streams = streamsOf(options.load)
  if (streams === null) {
    const starts = openLoopSchedule(
      options.load,
      options.workload,
      maxRequests,
      createSeededRandom(options.seed + 11),
    )
    // Open loop: conversations start on the schedule; their later turns follow answers.
    for (const { atMs, conversation } of starts) queue.push(atMs, { kind: 'arrival', conversation })
  } else {
    for (let s = 0; s < streams; s++) startConversation(0)
  }
  // Replicas scrape on their own schedules, spread over the interval.
  for (let r = 0; r < replicaCount; r++)
    queue.push((r * timing.metricsIntervalMs) / replicaCount, { kind: 'scrape', replica: r })

  const kick = (podIndex: number, time: number) => {
    const pod = pods[podIndex] as Pod
    if (pod.stepping) return
    pod.stepping = true
    queue.push(time, { kind: 'step', pod: podIndex })
  }

  const dispatch = async (time: number, entry: PendingTurn) => {
    const plan = planOf(entry.conversation)
    const turn = plan.turns[entry.turn]
    if (!turn) return
    const prompt = chatPromptIds(options.frame, plan.prefix?.ids ?? null, [
      ...entry.history,
      { userIds: turn.userIds },
    ])
    const id = `c${entry.conversation}t${entry.turn}`
    const router = replicas.assign(id)
    const tenant = admission?.tenantOf(entry.conversation) ?? null
    const request = router.prepare({
      id,
      model,
      promptIds: prompt,
      maxTokens: turn.outputTokens,
      cacheSalt: null,
      promptText: () => asText(prompt),
      ...(tenant !== null ? { tenant } : {}),
    })
    const lookup = await router.lookup(request)
    const arrival: Arrival = {
      entry,
      prompt,
      lookup,
      outputTokens: turn.outputTokens,
      userIds: turn.userIds,
      startMs: time,
      tenant,
      released: (route, at) => commit(at, arrival, route),
      ...(admission?.holds
        ? {
            expired: (at: number) => {
              const step = admission.expired(lookup.request.routing, at, turn.outputTokens)
              if (step.kind !== 'local') settleElsewhere(at, arrival, step)
            },
          }
        : {}),
    }
    const route = admission ? router.score(lookup, time) : undefined
    let terms: HoldTerms | undefined
    if (admission && route) {
      const request = lookup.request.routing
      const predicted = router.prediction(lookup, route)
      const step = admission.decide({ route, request, predicted, nowMs: time }, turn.outputTokens)
      if (step.kind !== 'local') return settleElsewhere(time, arrival, step)
      if (step.deadlineMs !== null) terms = { deadlineMs: step.deadlineMs }
    }
    const offer = router.offer(lookup, arrival, time, route, terms)
    if (offer.kind === 'routed') commit(time, arrival, offer.route)
  }

  /** The pool refused `arrival`, or the provider took it: it never reaches a pod. */
  const settleElsewhere = (
    time: number,
    arrival: Arrival,
    step: Exclude<AdmissionStep, { kind: 'local' }>,
  ) => {
    const { entry, lookup } = arrival
    const id = lookup.request.routing.id
    replicas.release(id)
    const base = baseRecord(id, arrival, time, lookup.request.routing.promptTokens, null)
    if (step.kind === 'refused') {
      records.push(refusedRecord(base, step))
      return endConversation(time, entry.conversation)
    }
    const { flight } = answerOf(arrival, providerRecord(base, step, arrival.outputTokens))
    queue.push(step.endMs, { kind: 'provider-end', flight })
  }

  /**
   * `arrival` answered (by a pod or the provider): its answer's words and the conversation
   * it continues. A later turn sends the answer back, so its words matter; a single-turn
   * answer is never seen again (its blocks hash under a unique prompt either way).
   */
  const answerOf = (arrival: Arrival, record: RequestRecord) => {
    const { entry } = arrival
    const outputIds = multiTurn
      ? randomWords(options.vocabulary, arrival.outputTokens, outputRandom)
      : silentAnswer(arrival.outputTokens)
    const history = [...entry.history, { userIds: arrival.userIds, assistantIds: outputIds }]
    const flight: InFlight = { record, conversation: entry.conversation, turn: entry.turn, history }
    return { flight, outputIds }
  }

  /** The router dispatched `arrival` to its pod: the pod's engine gets it after the network. */
  const commit = (time: number, arrival: Arrival, route: RouteResult) => {
    const { lookup } = arrival
    const id = lookup.request.routing.id
    const podName = route.decision.pod as string
    const at = podIndex.get(podName) as number
    const record = baseRecord(id, arrival, time, lookup.request.routing.promptTokens, podName)
    const { flight, outputIds } = answerOf(arrival, record)
    inFlight.set(id, flight)
    ;(pods[at] as Pod).engine.add({
      id,
      promptTokenIds: arrival.prompt,
      outputTokenIds: outputIds,
      finishReason: 'length',
      arrivalMs: time + network,
    })
    kick(at, time + network)
  }

  /** A refused turn ends its conversation: a closed-loop stream starts another. */
  const endConversation = (time: number, conversation: number) => {
    done++
    options.onProgress?.(done)
    plans.delete(conversation)
    if (streams !== null) startConversation(time)
  }

  const finish = (time: number, flight: InFlight) => {
    records.push(flight.record)
    done++
    options.onProgress?.(done)
    lastEnd = Math.max(lastEnd, time)
    const plan = planOf(flight.conversation)
    if (flight.turn + 1 >= plan.turns.length) plans.delete(flight.conversation)
    if (flight.turn + 1 < plan.turns.length)
      send(time, flight.conversation, flight.turn + 1, flight.history)
    else if (streams !== null) startConversation(time)
  }

  for (let item = queue.pop(); item; item = queue.pop()) {
    const { time, event } = item
    now = time
    if (event.kind === 'arrival') {
      if (sent < maxRequests) {
        sent++
        await dispatch(time, { conversation: event.conversation, turn: 0, history: [] })
      }
    } else if (event.kind === 'send') await dispatch(time, event.turn)
    else if (event.kind === 'provider-end') finish(time, event.flight)
    else if (event.kind === 'step') {
      const pod = pods[event.pod] as Pod
      const step = pod.engine.step(time)
      if (step) queue.push(time + step.durationMs, { kind: 'step-end', pod: event.pod, step })
      else {
        const next = pod.engine.nextArrivalMs()
        if (next !== null && next > time) queue.push(next, { kind: 'step', pod: event.pod })
        else pod.stepping = false
      }
    } else if (event.kind === 'step-end') {
      const pod = pods[event.pod] as Pod
      const { step } = event
      // A lost batch still takes its sequence number: the index sees the gap, not the blocks.
      const lost =
        step.events.length > 0 && timing.eventLossRate > 0 && lossRandom() < timing.eventLossRate
      if (lost) pod.seq++
      else if (step.events.length > 0)
        queue.push(time + eventDelay, {
          kind: 'events',
          pod: event.pod,
          events: step.events,
          seq: pod.seq++,
        })
      for (const started of step.started) {
        const flight = inFlight.get(started.requestId)
        if (flight) flight.record.cachedTokens = started.numCachedTokens
      }
      const at = time + network
      for (const output of step.outputs) {
        const flight = inFlight.get(output.requestId)
        if (!flight) continue
        const record = flight.record
        record.tokenTimesMs.push(at)
        record.outputTokens++
        if (output.index === 0) {
          record.firstTokenMs = at
          replicas.of(record.id)?.firstToken(record.id, at)
        } else replicas.of(record.id)?.progress(record.id, record.outputTokens, at)
        if (output.finished) {
          record.endMs = at
          inFlight.delete(output.requestId)
          replicas.of(record.id)?.finished(record.id, at, record.cachedTokens)
          replicas.release(record.id)
          finish(at, flight)
        }
      }
      if (pod.engine.hasWork()) queue.push(time, { kind: 'step', pod: event.pod })
      else pod.stepping = false
    } else if (event.kind === 'events') {
      const pod = pods[event.pod] as Pod
      const split = toPodEvents(event.events.map(toWire), pod.groups)
      await index.apply(pod.name, model, split.index, event.seq)
      if (tiers && split.tiers.length > 0)
        await tiers.holdings.apply(pod.name, split.tiers, event.seq)
      // As the scorer does: the pool keys requests with the block size the events carry.
      if (split.blockSize !== null)
        for (const router of replicas.all) router.learnBlockSize(split.blockSize)
    } else if (event.kind === 'metrics') {
      const router = replicas.all[event.replica] as PoolRouter<Arrival>
      event.snapshot.forEach((view, i) => {
        router.updateMetrics((pods[i] as Pod).name, view, time, capacity)
      })
    } else if (event.kind === 'scrape') {
      // Sampled now, read by the router `scrapeDelay` later.
      const snapshot = pods.map(({ engine: { stats } }) => ({
        running: stats.running,
        waiting: stats.waiting,
        kvCacheUsage: stats.kvCacheUsage,
      }))
      queue.push(time + scrapeDelay, { kind: 'metrics', replica: event.replica, snapshot })
      if (done < maxRequests && (queue.size > 0 || inFlight.size > 0))
        queue.push(time + scrapeEvery, { kind: 'scrape', replica: event.replica })
    }
  }

  // vLLM's exported prefix_cache_queries/hits: every lookup, preempted requests left out.
  const prefixCache = pods.reduce(
    (sum, pod) => ({
      queries: sum.queries + pod.engine.stats.prefixCacheQueries,
      hits: sum.hits + pod.engine.stats.prefixCacheHits,
    }),
    { queries: 0, hits: 0 },
  )
  return {
    config: {
      mode: 'des',
      router: options.pool.routing.strategy,
      workload: options.workloadName,
      profile: describeProfile(options.load),
      rate: rateOfProfile(options.load) ?? streams,
      pods: options.pods,
      gpuProfile: options.gpuProfile.name,
      seed: options.seed,
      dataSpec: options.dataSpec,
      ...(replicaCount > 1 ? { replicas: replicaCount } : {}),
    },
    startMs: 0,
    endMs: lastEnd,
    records: records.sort((a, b) => a.startMs - b.startMs),
    prefixCache,
    preemptions: pods.reduce((sum, pod) => sum + pod.engine.stats.preemptions, 0),
    skippedRequests: options.workload.skipped,
    elapsedSeconds: (performance.now() - started) / 1000,
  }
}
