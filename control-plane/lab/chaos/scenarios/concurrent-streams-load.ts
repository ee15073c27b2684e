import type { RequestOutcome } from '../chaos-client.ts'
import type { ChaosScenario } from '../chaos-scenario.ts'
import { startChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { percentile, type ScenarioCheck, tallyOutcomes } from '../scenario-result.ts'
import { collectPodTimings } from './pod-timings.ts'
import { listenOverflows, mib, residentBytes, rssSummary, startSampler } from './process-probes.ts'

/** The sizes of the run: the full one is the issue's, the short one CI's. */
const plans = {
  full: { streams: 1_000, durationMs: 60_000, pods: 4, warmUpMs: 10_000 },
  short: { streams: 100, durationMs: 8_000, pods: 3, warmUpMs: 3_000 },
}

/**
 * Scenario 9: a closed loop of concurrent streaming clients through the edge and one
 * scorer for a fixed time. Nothing may fail; the edge's and the scorer's memory must not
 * trend upward; and the latency the stack adds is measured per request: the client's time
 * to first token minus the pod's own (from the request's arrival at the pod to its first
 * token, which the simulated pod records by request id). The pods run at time scale 50
 * with 8-token answers, so the engine is not what is measured.
 */
export const concurrentStreamsLoad: ChaosScenario = {
  id: 'concurrent-streams-load',
  title: '9. 1,000 concurrent streams',
  async run(context) {
    const plan = plans[context.size]
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: plan.pods,
      scorers: 1,
      timeScale: 50,
      seed: context.seed,
      requestsPerMinute: 100_000_000,
    })
    try {
      const scorer = stack.scorers[0]
      if (!scorer) throw new Error('no scorer')
      const edgePid = stack.edge.process.child.pid ?? 0
      const scorerPid = scorer.process.child.pid ?? 0
      const idle = [await residentBytes(edgePid), await residentBytes(scorerPid)]
      const pods = collectPodTimings(stack.pods, 2_000)
      const prompts = chaosPrompts({ seed: context.seed, prefixes: 8, prefixWords: 60 })
      const load = (name: string, durationMs: number) => {
        const id = (i: number) => `${name}-${stack.run}-${i}`
        const run = startTraffic(
          stack.client(),
          {
            concurrency: plan.streams,
            maxRequests: 10_000_000,
            durationMs,
            request: (i) =>
              chaosRequest(prompts(i), { maxTokens: 8, timeoutMs: 60_000, requestId: id(i) }),
          },
          context.nowMs,
        )
        return { id, done: run.done }
      }
      const overflowsBefore = await listenOverflows()
      // The same load first, unmeasured: the heaps grow to their working size meanwhile.
      const warmUp = await load('warm', plan.warmUpMs).done
      const edgeRss = startSampler(() => residentBytes(edgePid), 500)
      const scorerRss = startSampler(() => residentBytes(scorerPid), 500)
      const measured = load('load', plan.durationMs)
      const { id } = measured
      const started = context.nowMs()
      const outcomes = await measured.done
      const overflowsAfter = await listenOverflows()
      const seconds = (context.nowMs() - started) / 1000
      const [edgeSamples, scorerSamples, podTtft] = await Promise.all([
        edgeRss.stop(),
        scorerRss.stop(),
        pods.stop(),
      ])
      const added = addedLatencies(outcomes, podTtft, id)
      const tally = tallyOutcomes([...warmUp, ...outcomes])
      const onPods = outcomes.filter((o) => o.kind === 'completed' && o.pod !== null).length
      const clientTtft = outcomes.flatMap((o) =>
        o.kind === 'completed' && o.ttftMs !== null ? [o.ttftMs] : [],
      )
      const p = (values: number[], q: number) =>
        `${(percentile(values, q) ?? Number.NaN).toFixed(1)} ms`
      return {
        ...tally,
        convergence: null,
        checks: [
          {
            name: 'no errors',
            ok: tally.cleanErrors === 0 && tally.lost === 0,
            detail: `${tally.cleanErrors} clean errors, ${tally.lost} lost of ${tally.requests}`,
          },
          flatCheck('edge memory flat after warm-up', edgeSamples),
          flatCheck('scorer memory flat after warm-up', scorerSamples),
          {
            name: 'added latency measured on most requests',
            ok: added.length >= onPods * 0.9 && added.length > 0,
            detail: `${added.length} of ${onPods} served by pods paired with the pod's own time`,
          },
        ],
        notes: [
          `${plan.streams} concurrent streams for ${(plan.durationMs / 1000).toFixed(0)} s after ${(plan.warmUpMs / 1000).toFixed(0)} s of warm-up: ${outcomes.length} requests measured (${(outcomes.length / seconds).toFixed(0)}/s), ${onPods} served by ${plan.pods} pods, ${outcomes.length - onPods} elsewhere; ${warmUp.length} in the warm-up`,
          `latency the stack adds (client TTFT − the pod's own): p50 ${p(added, 50)}, p99 ${p(added, 99)}; client TTFT p50 ${p(clientTtft, 50)}, p99 ${p(clientTtft, 99)}`,
          `RSS idle, then from the end of the warm-up: edge ${mib(idle[0] ?? 0)}, ${rssSummary(edgeSamples)}; scorer ${mib(idle[1] ?? 0)}, ${rssSummary(scorerSamples)} (sampled every 0.5 s)`,
          `listen queue overflows on this host during the run (warm-up included): ${overflowsBefore === null || overflowsAfter === null ? 'unknown' : overflowsAfter - overflowsBefore}`,
          'one 2-core machine runs the clients, the edge, the scorer and the pods: the added latency includes their contention for the CPU',
        ],
      }
    } finally {
      await stack.close()
    }
  },
}

/** Client TTFT minus the pod's own TTFT, for every completed request the pod timed. */
function addedLatencies(
  outcomes: readonly RequestOutcome[],
  podTtft: ReadonlyMap<string, number>,
  id: (i: number) => string,
): number[] {
  return outcomes.flatMap((outcome, i) => {
    const atPod = podTtft.get(id(i))
    if (outcome.kind !== 'completed' || outcome.ttftMs === null || atPod === undefined) return []
    return [outcome.ttftMs - atPod]
  })
}

/**
 * Flat: past the first quarter of the run (warm-up), the last quarter's mean is within
 * 20% (and 32 MiB) of the second quarter's; a leak grows with the requests served.
 */
function flatCheck(name: string, samples: readonly number[]): ScenarioCheck {
  const quarter = Math.floor(samples.length / 4)
  const mean = (part: readonly number[]) =>
    part.reduce((sum, value) => sum + value, 0) / Math.max(1, part.length)
  const second = mean(samples.slice(quarter, 2 * quarter))
  const last = mean(samples.slice(-quarter))
  return {
    name,
    ok: quarter > 0 && last <= second * 1.2 + 32 * 2 ** 20,
    detail: `mean RSS ${mib(second)} in the second quarter, ${mib(last)} in the last (${samples.length} samples)`,
  }
}
