import { type Decision, joinDecisions } from '../../../../shared/state/decision-entry.ts'
import { createRedisStateStore } from '../../../state/redis-state-store.ts'
import type { ChaosContext, ChaosScenario } from '../chaos-scenario.ts'
import { timeUntil } from '../chaos-scenario.ts'
import { type ChaosStack, withChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { tallyOutcomes } from '../scenario-result.ts'
import { openIndexReader, required, scorerPod, sleep } from './scorer-view.ts'

/**
 * Scenario 2: a pod is killed and started again on the same address (a new process: its
 * KV-event seq starts at 0, a new process start time, an empty cache). The scorer must
 * forget the old process's blocks and follow the new one's within 2 s; afterwards, what
 * it predicted a request would find cached there is what the pod reports it found.
 */
export const podRestarted: ChaosScenario = {
  id: 'pod-restarted',
  title: '2. pod restarted',
  async run(context) {
    return withChaosStack(context, {}, (stack) => restartUnderTraffic(stack, context))
  },
}

async function restartUnderTraffic(stack: ChaosStack, context: ChaosContext) {
  const full = context.size === 'full'
  const scorer = required(stack.scorers[0], 'scorer')
  const index = await openIndexReader(context, stack)
  const decisions = await createRedisStateStore({ redis: context.redisUrl, prefix: stack.prefix })
  try {
    const shared = chaosPrompts({ seed: context.seed, prefixes: 6, prefixWords: 400 })
    // After the restart a third of the prompts share prefixes no pod held before: each goes
    // where the load is lightest, often the restarted pod (cold), and then predicted hits
    // there come from what the new process published. Those prompts are every third index
    // (i % 3 === 2), so the fresh prefixes must not be a multiple of 3 in number, or one
    // alone would come up (i % 3 is always 2): with 4, each of them starts somewhere, and
    // the chance that none starts on the restarted pod is small.
    const fresh = chaosPrompts({ seed: context.seed + 1, prefixes: 4, prefixWords: 300 })
    let restarted = false
    const prompts = (i: number) => (restarted && i % 3 === 2 ? fresh(i) : shared(i))
    let completed = 0
    const client = stack.client()
    const traffic = startTraffic(
      {
        send: async (request) => {
          const outcome = await client.send(request)
          if (outcome.kind === 'completed') completed++
          return outcome
        },
      },
      {
        concurrency: full ? 16 : 6,
        maxRequests: full ? 3_000 : 300,
        durationMs: 120_000,
        request: (i) => chaosRequest(prompts(i), { maxTokens: full ? 48 : 24 }),
      },
      context.nowMs,
    )
    await sleep(full ? 8_000 : 1_000)
    await timeUntil(async () => completed >= 6, { limitMs: 20_000, nowMs: context.nowMs })
    const names = stack.pods.map((pod) => pod.name)
    const before = await index.blocks(names)
    const victim = required(
      [...stack.pods].sort((a, b) => (before.get(b.name) ?? 0) - (before.get(a.name) ?? 0))[0],
      'pod',
    )
    const restartsBefore = (await scorerPod(stack, scorer, victim.name))?.events?.restarts ?? 0
    const killedWallMs = Date.now()
    await victim.stop('SIGKILL')
    await victim.start()
    const upWallMs = Date.now()
    restarted = true
    const blocksAtRestart = (await index.blocks([victim.name])).get(victim.name) ?? 0
    const converged = await timeUntil(
      async () => {
        const pod = await scorerPod(stack, scorer, victim.name)
        return (
          pod?.healthy === true && pod.indexReady && (pod.events?.restarts ?? 0) > restartsBefore
        )
      },
      { limitMs: 10_000, everyMs: 25, nowMs: context.nowMs },
    )
    await sleep(full ? 15_000 : 4_000)
    traffic.stop()
    const outcomes = await traffic.done
    // The decision log is written every 100 ms, off the request path.
    await sleep(500)
    const joined = joinDecisions(
      await decisions.readDecisions({ sinceMs: killedWallMs, count: 10_000 }),
    )
    const after = joined.filter((d) => d.atMs >= upWallMs && d.end?.outcome === 'completed')
    const onVictim = agreement(after.filter((d) => d.pod === victim.name))
    const elsewhere = agreement(after.filter((d) => d.pod !== victim.name))
    const view = await scorerPod(stack, scorer, victim.name)
    return {
      ...tallyOutcomes(outcomes),
      convergence: {
        what: 'restarted pod routed again on its new process’s index',
        ms: converged,
        targetMs: 2_000,
      },
      checks: [
        {
          name: 'the old process’s blocks were out of the index when the new one came up',
          ok: (before.get(victim.name) ?? 0) > 0 && blocksAtRestart === 0,
          detail: `${before.get(victim.name) ?? 0} blocks before the kill, ${blocksAtRestart} when it was up again`,
        },
        {
          name: 'after the restart, predicted cached tokens on it are what it reported',
          ok: onVictim.hits > 0 && onVictim.over === 0,
          detail: `${describe(onVictim)} on ${victim.name}; elsewhere ${describe(elsewhere)}`,
        },
      ],
      notes: [
        `${victim.name} killed and started again; ${view?.events?.restarts ?? 0} feed restarts, ${view?.events?.replays ?? 0} replays, trust ${view?.trust ?? '?'} (drift ${(view?.drift ?? 0).toFixed(3)})`,
      ],
    }
  } finally {
    await decisions.close()
    await index.close()
  }
}

/**
 * Predicted (matched) against reported cached tokens. A completed answer without
 * cached_tokens had none cached: the simulated pod, like vLLM without prompt-token
 * details, leaves the field out then.
 */
function agreement(decisions: readonly Decision[]) {
  const reported = decisions.filter((d) => d.end?.status === 200)
  const delta = (d: Decision) => d.matchedTokens - (d.end?.cachedTokens ?? 0)
  return {
    requests: reported.length,
    exact: reported.filter((d) => delta(d) === 0).length,
    /** Predicted more than the pod had: routed on blocks it did not hold. */
    over: reported.filter((d) => delta(d) > 0).length,
    under: reported.filter((d) => delta(d) < 0).length,
    overTokens: Math.max(0, ...reported.map(delta)),
    hits: reported.filter((d) => (d.end?.cachedTokens ?? 0) > 0).length,
  }
}

function describe(a: ReturnType<typeof agreement>): string {
  return `${a.requests} requests (${a.hits} with a hit): ${a.exact} exact, ${a.over} predicted more than reported (by up to ${a.overTokens} tokens), ${a.under} less`
}
