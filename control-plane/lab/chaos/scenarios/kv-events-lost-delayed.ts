import { KinferenceParameters } from '../../../../shared/routing/strategies/create-kinference-strategy.ts'
import type { ChaosContext, ChaosScenario } from '../chaos-scenario.ts'
import { timeUntil } from '../chaos-scenario.ts'
import { type ChaosStack, withChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { tallyOutcomes } from '../scenario-result.ts'
import { type AdminPod, required, scorerPods, sleep } from './scorer-view.ts'

/** The chaos pool sets none: the default drift past which a pod is demoted from precise. */
const demotionDrift = KinferenceParameters.parse({}).driftTolerance
const trustRank: Record<string, number> = { precise: 0, approximate: 1, 'load-only': 2 }

/** What the scorer showed of one pod while the faults were on. */
interface PodUnderFault {
  maxDrift: number
  worstTrust: string
}

/**
 * Scenario 3: every pod loses 10% of its KV-event batches and sends the rest 500 ms late,
 * under traffic. Gaps must be repaired by replays; the index's drift (predicted against
 * reported cached tokens) stays below the demotion threshold, or a demoted pod is trusted
 * again once the faults stop.
 */
export const kvEventsLostDelayed: ChaosScenario = {
  id: 'kv-events-lost-delayed',
  title: '3. KV events lost (10%) and delayed (500 ms)',
  async run(context) {
    return withChaosStack(context, {}, (stack) => faultsUnderTraffic(stack, context))
  },
}

async function faultsUnderTraffic(stack: ChaosStack, context: ChaosContext) {
  const full = context.size === 'full'
  const scorer = required(stack.scorers[0], 'scorer')
  const prompts = chaosPrompts({ seed: context.seed, prefixes: 8, prefixWords: 300 })
  const traffic = startTraffic(
    stack.client(),
    {
      concurrency: full ? 16 : 8,
      maxRequests: full ? 6_000 : 600,
      durationMs: 180_000,
      request: (i) => chaosRequest(prompts(i), { maxTokens: 16 }),
    },
    context.nowMs,
  )
  await sleep(full ? 8_000 : 2_000)
  const before = await scorerPods(stack, scorer)
  await Promise.all(
    stack.pods.map((pod) => pod.setFaults({ dropEventRate: 0.1, eventDelayMs: 500 })),
  )
  const seen = new Map<string, PodUnderFault>()
  const faultEnds = context.nowMs() + (full ? 30_000 : 6_000)
  while (context.nowMs() < faultEnds) {
    for (const pod of await scorerPods(stack, scorer)) note(seen, pod)
    await sleep(250)
  }
  await Promise.all(stack.pods.map((pod) => pod.setFaults({ dropEventRate: 0, eventDelayMs: 0 })))
  const during = await scorerPods(stack, scorer)
  const recovered = await timeUntil(
    async () =>
      (await scorerPods(stack, scorer)).every(
        (pod) => pod.trust === 'precise' && pod.drift <= demotionDrift,
      ),
    { limitMs: full ? 30_000 : 10_000, everyMs: 100, nowMs: context.nowMs },
  )
  // A last stretch of clean traffic: what the pods look like once settled.
  await sleep(full ? 5_000 : 1_000)
  traffic.stop()
  const outcomes = await traffic.done
  const after = await scorerPods(stack, scorer)
  const counts = eventCounts(before, during)
  const demoted = [...seen.values()].some((pod) => pod.worstTrust !== 'precise')
  const maxDrift = Math.max(0, ...[...seen.values()].map((pod) => pod.maxDrift))
  return {
    ...tallyOutcomes(outcomes),
    convergence: {
      what: 'every pod precise again after the faults',
      ms: recovered,
      targetMs: null,
    },
    checks: [
      {
        name: 'the lost batches showed as gaps, and replays repaired every one',
        ok: counts.gaps > 0 && counts.unrepairable === 0 && counts.replays >= counts.gaps,
        detail: `${counts.gaps} gaps, ${counts.replays} replays, ${counts.unrepairable} unrepairable while the faults were on`,
      },
      {
        name: `drift below the demotion threshold (${demotionDrift}), or demoted and recovered`,
        ok: maxDrift <= demotionDrift ? !demoted : recovered !== null,
        detail: `highest drift ${maxDrift.toFixed(3)}; ${demoted ? `demoted, ${recovered === null ? 'not recovered' : `every pod precise ${Math.round(recovered)} ms after the faults were cleared`}` : 'never demoted'}`,
      },
    ],
    notes: [
      ...[...seen].map(
        ([name, pod]) =>
          `${name}: drift up to ${pod.maxDrift.toFixed(3)}, trust at worst ${pod.worstTrust}, after ${describePod(after.find((p) => p.name === name))}`,
      ),
      `KV-event batches applied while faulted: ${counts.batches}`,
      'a replayed gap resets the pod’s trust and drift (its index was just rebuilt), so drift counts the answers since the last repair',
    ],
  }
}

function note(seen: Map<string, PodUnderFault>, pod: AdminPod): void {
  const known = seen.get(pod.name) ?? { maxDrift: 0, worstTrust: 'precise' }
  seen.set(pod.name, {
    maxDrift: Math.max(known.maxDrift, pod.drift),
    worstTrust:
      (trustRank[pod.trust] ?? 0) > (trustRank[known.worstTrust] ?? 0)
        ? pod.trust
        : known.worstTrust,
  })
}

/** The ingestors' counters over the faulted stretch, summed over the pods. */
function eventCounts(before: readonly AdminPod[], after: readonly AdminPod[]) {
  const sum = (pods: readonly AdminPod[], key: 'batches' | 'gaps' | 'replays' | 'unrepairable') =>
    pods.reduce((total, pod) => total + (pod.events?.[key] ?? 0), 0)
  const delta = (key: 'batches' | 'gaps' | 'replays' | 'unrepairable') =>
    sum(after, key) - sum(before, key)
  return {
    batches: delta('batches'),
    gaps: delta('gaps'),
    replays: delta('replays'),
    unrepairable: delta('unrepairable'),
  }
}

function describePod(pod: AdminPod | undefined): string {
  if (!pod) return 'gone'
  return `${pod.trust}, drift ${pod.drift.toFixed(3)} over ${pod.driftObservations} answers`
}
