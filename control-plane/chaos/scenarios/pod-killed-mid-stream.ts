import type { ChaosScenario } from '../chaos-scenario.ts'
import { timeUntil } from '../chaos-scenario.ts'
import { startChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { tallyOutcomes } from '../scenario-result.ts'

interface PodsReport {
  pools: { pods: { name: string; healthy: boolean }[] }[]
}

/**
 * Scenario 1: a pod is killed (SIGKILL) while streams run on it. Streams on it must end
 * with an error event and [DONE]; requests not yet answered move to another pod; the
 * scorer stops routing to it.
 */
export const podKilledMidStream: ChaosScenario = {
  id: 'pod-killed-mid-stream',
  title: '1. pod killed mid-stream',
  async run(context) {
    const full = context.size === 'full'
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: 3,
      scorers: 1,
      timeScale: 1,
      seed: context.seed,
    })
    try {
      const prompts = chaosPrompts({ seed: context.seed, prefixes: 6, prefixWords: 400 })
      const traffic = startTraffic(
        stack.client(),
        {
          concurrency: full ? 24 : 8,
          maxRequests: full ? 2_000 : 120,
          durationMs: full ? 30_000 : 6_000,
          request: (i) => chaosRequest(prompts(i), { maxTokens: 96 }),
        },
        context.nowMs,
      )
      await new Promise((resolve) => setTimeout(resolve, full ? 10_000 : 2_000))
      const victim = stack.pods[1]
      if (!victim) throw new Error('no pod to kill')
      await victim.stop('SIGKILL')
      const scorer = stack.scorers[0]
      if (!scorer) throw new Error('no scorer')
      const dropped = await timeUntil(
        async () => {
          const report = (await stack.admin(scorer, '/admin/pods')) as PodsReport
          const pod = report.pools.flatMap((pool) => pool.pods).find((p) => p.name === victim.name)
          return pod === undefined || !pod.healthy
        },
        { limitMs: 10_000, nowMs: context.nowMs },
      )
      const outcomes = await traffic.done
      const after = outcomes.slice(-Math.min(20, outcomes.length))
      const onVictim = after.filter((o) => o.kind === 'completed' && o.pod === victim.name).length
      return {
        ...tallyOutcomes(outcomes),
        convergence: { what: 'pod out of routing', ms: dropped, targetMs: 2_000 },
        checks: [
          {
            name: 'nothing routed to the dead pod at the end',
            ok: onVictim === 0,
            detail: `${onVictim} of the last ${after.length} completed on ${victim.name}`,
          },
        ],
        notes: [],
      }
    } finally {
      await stack.close()
    }
  },
}
