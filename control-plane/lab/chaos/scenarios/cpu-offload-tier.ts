import type { RequestOutcome } from '../chaos-client.ts'
import type { ChaosContext, ChaosScenario } from '../chaos-scenario.ts'
import { type ChaosStack, withChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { tallyOutcomes } from '../scenario-result.ts'
import {
  type AdminPod,
  openIndexReader,
  required,
  scorerCounter,
  scorerPods,
  sleep,
} from './scorer-view.ts'

/** The pods' CPU tier, in blocks: well under the traffic's working set, so it turns over. */
const cpuBlocks = 2_000
/** The run is cut into this many windows; GPU hits must be seen in every one but the first. */
const windows = 10

/** One look at the scorer and the index during the run. */
interface Sample {
  atMs: number
  pods: AdminPod[]
  blocks: Map<string, number>
  matchedTokens: number
  resyncs: number
  skipped: number
}

/**
 * Scenario 11: every pod runs vLLM's OffloadingConnector with a CPU tier, whose events
 * (medium CPU, block_size 0, no token ids) share each step's batch with the GPU events. A
 * decoder that refuses such a batch drops the pod's index at every step; here the run
 * (10 minutes in full) must end with no pod ever dropped or resynced, no event skipped, and
 * the scorer matching GPU blocks in every tenth of it.
 */
export const cpuOffloadTier: ChaosScenario = {
  id: 'cpu-offload-tier',
  title: '11. vLLM CPU offload tier on (OffloadingConnector events)',
  async run(context) {
    return withChaosStack(
      context,
      { podArgs: ['--cpu-offload-blocks', String(cpuBlocks)] },
      (stack) => offloadUnderTraffic(stack, context),
    )
  },
}

async function offloadUnderTraffic(stack: ChaosStack, context: ChaosContext) {
  const full = context.size === 'full'
  const durationMs = full ? 600_000 : 45_000
  const index = await openIndexReader(context, stack)
  const names = stack.pods.map((pod) => pod.name)
  const prompts = chaosPrompts({ seed: context.seed, prefixes: 24, prefixWords: 400 })
  const startedMs = context.nowMs()
  const traffic = startTraffic(
    stack.client(),
    {
      concurrency: full ? 12 : 8,
      maxRequests: Number.MAX_SAFE_INTEGER,
      durationMs,
      request: (i) => chaosRequest(prompts(i), { maxTokens: 16 }),
    },
    context.nowMs,
  )
  const samples: Sample[] = []
  try {
    while (context.nowMs() - startedMs < durationMs) {
      samples.push(await sample(stack, index, names, context.nowMs() - startedMs))
      await sleep(full ? 5_000 : 1_500)
    }
    samples.push(await sample(stack, index, names, context.nowMs() - startedMs))
  } finally {
    traffic.stop()
    await index.close()
  }
  const outcomes = await traffic.done
  return { ...tallyOutcomes(outcomes), convergence: null, ...judge(samples, outcomes, durationMs) }
}

async function sample(
  stack: ChaosStack,
  index: Awaited<ReturnType<typeof openIndexReader>>,
  names: readonly string[],
  atMs: number,
): Promise<Sample> {
  const scorer = required(stack.scorers[0], 'scorer')
  const [pods, blocks, matchedTokens, resyncs, skipped] = await Promise.all([
    scorerPods(stack, scorer),
    index.blocks(names),
    scorerCounter(scorer, 'kinference_scorer_matched_tokens'),
    scorerCounter(scorer, 'kinference_scorer_index_resyncs'),
    scorerCounter(scorer, 'kinference_scorer_events_skipped'),
  ])
  return { atMs, pods, blocks, matchedTokens, resyncs, skipped }
}

function judge(
  samples: readonly Sample[],
  outcomes: readonly RequestOutcome[],
  durationMs: number,
) {
  const first = required(samples[0], 'a sample')
  const last = required(samples.at(-1), 'a sample')
  const events = (key: 'restarts' | 'unrepairable' | 'gaps' | 'batches') =>
    last.pods.reduce((total, pod) => total + (pod.events?.[key] ?? 0), 0)
  // The first seconds are the pods' cold start: an empty index is not a dropped one.
  const warm = samples.filter((s) => s.atMs >= durationMs / windows)
  const emptied = warm.flatMap((s) =>
    [...s.blocks].filter(([, count]) => count === 0).map(([pod]) => `${pod} at ${s.atMs} ms`),
  )
  const gpuHitsPerWindow = Array.from({ length: windows }, (_, w) => {
    const from = w * (durationMs / windows)
    const to = from + durationMs / windows
    const inside = samples.filter((s) => s.atMs >= from && s.atMs <= to)
    const before = samples.filter((s) => s.atMs <= from).at(-1) ?? first
    const end = inside.at(-1) ?? before
    return end.matchedTokens - before.matchedTokens
  })
  const completed = outcomes.filter((o) => o.kind === 'completed')
  const cached = completed.reduce((sum, o) => sum + (o.cachedTokens ?? 0), 0)
  const prompt = completed.reduce((sum, o) => sum + (o.promptTokens ?? 0), 0)
  const demoted = last.pods.filter((pod) => pod.trust !== 'precise')
  return {
    checks: [
      {
        name: 'no pod dropped from the index: no resync, restart or unrepairable gap, blocks held throughout',
        ok:
          last.resyncs === first.resyncs &&
          events('restarts') === 0 &&
          events('unrepairable') === 0 &&
          emptied.length === 0,
        detail: `${last.resyncs - first.resyncs} resyncs, ${events('restarts')} restarts, ${events('unrepairable')} unrepairable gaps, ${events('batches')} batches applied; ${emptied.length === 0 ? 'every pod held blocks at every sample after the first tenth' : `emptied: ${emptied.slice(0, 3).join(', ')}`}`,
      },
      {
        name: 'no event skipped: the CPU events are read, not refused',
        ok: last.skipped === 0,
        detail: `${last.skipped} events skipped`,
      },
      {
        name: 'GPU hits continue: the scorer matched cached blocks in each tenth of the run after the first (cold start)',
        ok: gpuHitsPerWindow.slice(1).every((tokens) => tokens > 0),
        detail: `matched tokens per tenth: ${gpuHitsPerWindow.join(', ')}`,
      },
    ],
    notes: [
      `pods reported ${cached} cached of ${prompt} prompt tokens (GPU and CPU tiers together)`,
      `trust at the end: ${last.pods.map((pod) => `${pod.name} ${pod.trust}, drift ${pod.drift.toFixed(3)}`).join('; ')}`,
      ...(demoted.length > 0
        ? [
            'a pod not precise at the end: its reported cached tokens include CPU-tier loads the GPU index does not predict',
          ]
        : []),
    ],
  }
}
