import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import type { ChaosPod } from '../chaos-parts.ts'
import type { ChaosContext, ChaosScenario } from '../chaos-scenario.ts'
import { timeUntil } from '../chaos-scenario.ts'
import { type ChaosStack, withChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { percentile, tallyOutcomes } from '../scenario-result.ts'
import {
  openIndexReader,
  required,
  scorerCounter,
  scorerPod,
  scorerPods,
  sleep,
  type TimedOutcome,
  timedClient,
} from './scorer-view.ts'

/** What each stream's events showed: an error event, and [DONE] after it. */
interface StreamEnd {
  error: boolean
  doneAfterError: boolean
}

/**
 * Scenario 1: a pod is killed (SIGKILL) while streams run on it and requests wait there
 * for their first token. Streams cut mid-way end with an error event and [DONE]; those not
 * yet answered are retried on another pod; the scorer takes the pod out of routing and
 * its blocks out of the index within 2 s, seen from its failing scrapes.
 */
export const podKilledMidStream: ChaosScenario = {
  id: 'pod-killed-mid-stream',
  title: '1. pod killed mid-stream',
  async run(context) {
    const full = context.size === 'full'
    return withChaosStack(context, {}, async (stack) => {
      const index = await openIndexReader(context, stack)
      try {
        return await killMidStream(stack, index, context, full)
      } finally {
        await index.close()
      }
    })
  },
}

type IndexReader = Awaited<ReturnType<typeof openIndexReader>>

async function killMidStream(
  stack: ChaosStack,
  index: IndexReader,
  context: ChaosContext,
  full: boolean,
) {
  const scorer = required(stack.scorers[0], 'scorer')
  const prompts = chaosPrompts({ seed: context.seed, prefixes: 6, prefixWords: 400 })
  const ends = new Map<number, StreamEnd>()
  const timed = timedClient(stack.client(), context.nowMs)
  const traffic = startTraffic(
    timed.client,
    {
      concurrency: full ? 24 : 8,
      maxRequests: full ? 3_000 : 200,
      // Stopped once the scorer has shown what it does after the kill (below).
      durationMs: 120_000,
      request: (i) =>
        chaosRequest(prompts(i), { maxTokens: full ? 96 : 48, onEvent: watchEnd(ends, i) }),
    },
    context.nowMs,
  )
  await sleep(full ? 10_000 : 2_000)
  // Some answers whole first: the victim must hold prompts the probes can be sent for.
  await timeUntil(
    async () => timed.outcomes.filter((o) => o.outcome.kind === 'completed').length >= 3,
    {
      limitMs: 20_000,
      nowMs: context.nowMs,
    },
  )
  const { victim, held, streams } = await chooseVictim(stack, index, timed.outcomes, context.nowMs)
  // Requests that wait on the victim for their first token when it dies: its engine is
  // frozen, and they are for a prompt it holds, so the router sends them there.
  const probes = Promise.all(
    [0, 1, 2].map((i) =>
      stack.client().send(chaosRequest(held, { maxTokens: 8, stream: i !== 1 })),
    ),
  )
  await timeUntil(
    async () => ((await scorerPod(stack, scorer, victim.name))?.load.pendingRequests ?? 0) > 0,
    { limitMs: 2_000, nowMs: context.nowMs },
  )
  const waiting = (await scorerPod(stack, scorer, victim.name))?.load.pendingRequests ?? 0
  const retriesBefore = await scorerCounter(scorer, 'kinference_scorer_retries')
  const killedAt = context.nowMs()
  await victim.stop('SIGKILL')
  const converged = await timeUntil(
    async () => {
      const pod = await scorerPod(stack, scorer, victim.name)
      const blocks = (await index.blocks([victim.name])).get(victim.name) ?? 0
      return pod !== undefined && !pod.healthy && blocks === 0
    },
    { limitMs: 10_000, everyMs: 25, nowMs: context.nowMs },
  )
  const retriesAtConvergence = await scorerCounter(scorer, 'kinference_scorer_retries')
  // Traffic goes on after the outage was seen, to show where it goes then.
  await sleep(full ? 15_000 : 3_000)
  traffic.stop()
  const probeOutcomes = await probes
  const outcomes = await traffic.done
  const retriesAfter =
    (await scorerCounter(scorer, 'kinference_scorer_retries')) - retriesAtConvergence
  const seenDownAt = converged === null ? Number.POSITIVE_INFINITY : killedAt + converged
  const later = timed.outcomes.filter((o) => o.sentAtMs > seenDownAt)
  const onVictim = later.filter(
    (o) => o.outcome.kind === 'completed' && o.outcome.pod === victim.name,
  )
  const cut = [...ends.values()].filter((end) => end.error)
  const pods = await scorerPods(stack, scorer)
  const latencies = outcomes.filter((o) => o.kind === 'completed').map((o) => o.latencyMs)
  return {
    ...tallyOutcomes([...outcomes, ...probeOutcomes]),
    convergence: {
      what: 'dead pod unhealthy and its blocks out of the index',
      ms: converged,
      targetMs: 2_000,
    },
    checks: [
      {
        name: 'streams cut on the dead pod ended with an error event, then [DONE]',
        ok: cut.length > 0 && cut.every((end) => end.doneAfterError),
        detail: `${cut.filter((end) => end.doneAfterError).length} of ${cut.length} cut streams had [DONE] after their error event`,
      },
      {
        name: 'requests waiting on it for their first token were retried on another pod',
        // The scorer's count of requests waiting for a first token may lag the stream: one
        // whose first token was on its way is cut instead (then counted with the cut ones).
        ok:
          waiting > 0 &&
          retriesAtConvergence - retriesBefore >= 1 &&
          probeOutcomes.every((o) => o.kind === 'completed'),
        detail: `${waiting} waiting at the kill as the scorer counted them, ${retriesAtConvergence - retriesBefore} retried before their first byte; probes sent for a prompt it held: ${probeOutcomes.map((o) => o.kind).join(', ')}`,
      },
      {
        name: 'nothing sent to the dead pod once the scorer saw it down',
        ok: onVictim.length === 0 && retriesAfter === 0,
        detail: `${later.length} requests sent after: ${onVictim.length} answered by it, ${retriesAfter} retried away from a dead pod`,
      },
    ],
    notes: [
      `killed ${victim.name} with ${waiting} requests waiting for their first token there (streams under way when chosen: ${streams})`,
      `completed latency p50 ${Math.round(percentile(latencies, 50) ?? 0)} ms, p99 ${Math.round(percentile(latencies, 99) ?? 0)} ms`,
      `scorer view after: ${pods.map((pod) => `${pod.name} ${pod.healthy ? 'healthy' : 'unhealthy'}`).join(', ')}`,
    ],
  }
}

function watchEnd(ends: Map<number, StreamEnd>, i: number): (data: string) => void {
  return (data) => {
    const end = ends.get(i) ?? { error: false, doneAfterError: false }
    if (data === '[DONE]') end.doneAfterError = end.error
    else if (data.startsWith('{"error"')) end.error = true
    ends.set(i, end)
  }
}

/**
 * How long after pausing a pod its streams are counted. The engine finishes the step it
 * was running when paused (the driver looks at the pause between steps), so a stream whose
 * last token is in that step still ends, and the scorer hears of it a little later. When
 * the router has put one prefix's requests on the pod together, they decode in lockstep
 * and all end in the same step: counted at once, the pod looked as if it had streams to
 * cut and had none at the kill. A full 2,048-token step of the chaos pods' profile
 * (l40s-27b-fp8) takes about 0.3 s; the rest is slack for a loaded machine.
 */
const pauseSettleMs = 1_000

/**
 * A pod with streams past their first token and blocks in the index (waiting a little
 * for one, as streams come and go), paused with streams that stayed under way once its
 * last step landed, and a prompt of the traffic it answered.
 */
async function chooseVictim(
  stack: ChaosStack,
  index: IndexReader,
  served: readonly TimedOutcome[],
  nowMs: () => number,
): Promise<{ victim: ChaosPod; held: ChatCompletionMessageParam[]; streams: number }> {
  const scorer = required(stack.scorers[0], 'scorer')
  let victim: ChaosPod | undefined
  let streams = 0
  await timeUntil(
    async () => {
      const views = await scorerPods(stack, scorer)
      const blocks = await index.blocks(stack.pods.map((pod) => pod.name))
      const streaming = (pod: ChaosPod) => {
        const load = views.find((view) => view.name === pod.name)?.load
        return load ? load.inFlight - load.pendingRequests : 0
      }
      victim = stack.pods
        .filter((pod) => (blocks.get(pod.name) ?? 0) > 0 && streaming(pod) > 0)
        .filter((pod) =>
          served.some((o) => o.outcome.kind === 'completed' && o.outcome.pod === pod.name),
        )
        .sort((a, b) => streaming(b) - streaming(a))[0]
      if (!victim) return false
      // Frozen, the streams still under way once its last step has landed stay so until
      // the kill (see pauseSettleMs).
      await victim.setFaults({ paused: true })
      await sleep(pauseSettleMs)
      const load = (await scorerPod(stack, scorer, victim.name))?.load
      streams = load ? load.inFlight - load.pendingRequests : 0
      if (streams > 0) return true
      await victim.setFaults({ paused: false })
      return false
    },
    { limitMs: 15_000, everyMs: 20, nowMs },
  )
  if (!victim) throw new Error('no pod with blocks in the index and streams under way')
  const name = victim.name
  const servedThere = served.find((o) => o.outcome.kind === 'completed' && o.outcome.pod === name)
  return { victim, held: servedThere?.request.messages ?? [], streams }
}
