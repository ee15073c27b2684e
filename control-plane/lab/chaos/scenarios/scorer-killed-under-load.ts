import type { RequestOutcome } from '../chaos-client.ts'
import type { ChaosScenario } from '../chaos-scenario.ts'
import { startChaosStack } from '../chaos-stack.ts'
import { chaosPrompts, chaosRequest, startTraffic } from '../chaos-traffic.ts'
import { tallyOutcomes } from '../scenario-result.ts'

/**
 * Scenario 5: two scorer replicas behind the edge, one killed (SIGKILL) under load. Streams
 * it was serving end with an error event; every request sent after it died is served by
 * the other replica.
 */
export const scorerKilledUnderLoad: ChaosScenario = {
  id: 'scorer-killed-under-load',
  title: '5. one of two scorers killed under load',
  async run(context) {
    const full = context.size === 'full'
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: 3,
      scorers: 2,
      timeScale: 2,
      seed: context.seed,
    })
    try {
      const prompts = chaosPrompts({ seed: context.seed, prefixes: 8, prefixWords: 300 })
      const traffic = startTraffic(
        stack.client(),
        {
          concurrency: full ? 32 : 12,
          maxRequests: full ? 4_000 : 400,
          durationMs: full ? 40_000 : 8_000,
          request: (i) => chaosRequest(prompts(i), { maxTokens: 48 }),
        },
        context.nowMs,
      )
      await new Promise((resolve) => setTimeout(resolve, full ? 15_000 : 3_000))
      const victim = stack.scorers[0]
      if (!victim) throw new Error('no scorer to kill')
      const killedAt = context.nowMs()
      await victim.stop('SIGKILL')
      const outcomes = await traffic.done
      const after = outcomes.filter((o) => o.startedMs > killedAt)
      const failedAfter = after.filter((o) => o.kind !== 'completed')
      return {
        ...tallyOutcomes(outcomes),
        convergence: {
          what: 'every request served again',
          ms: servedAgainAfter(outcomes, killedAt),
          targetMs: null,
        },
        checks: [
          {
            name: 'requests sent after the kill are served by the other replica',
            ok: after.length > 0 && failedAfter.length === 0,
            detail: `${after.length - failedAfter.length} of ${after.length} completed`,
          },
        ],
        notes: [
          `streams in flight on the killed replica: ${outcomes.filter((o) => o.kind === 'clean-error').length} ended with an error event (no retry after the first byte)`,
        ],
      }
    } finally {
      await stack.close()
    }
  },
}

/**
 * From the kill to the start of the first request after which every request completed:
 * how long the edge took to stop sending to the dead replica (0 when none failed).
 */
function servedAgainAfter(outcomes: readonly RequestOutcome[], killedAt: number): number | null {
  const failedStarts = outcomes
    .filter((o) => o.startedMs > killedAt && o.kind !== 'completed')
    .map((o) => o.startedMs)
  if (failedStarts.length === 0) return 0
  const lastFailed = Math.max(...failedStarts)
  const next = outcomes
    .filter((o) => o.startedMs > lastFailed && o.kind === 'completed')
    .map((o) => o.startedMs)
  return next.length === 0 ? null : Math.min(...next) - killedAt
}
