import type { ChaosScenario } from '../chaos-scenario.ts'
import { startChaosStack } from '../chaos-stack.ts'
import { tallyOutcomes } from '../scenario-result.ts'
import { controllerSigterm } from './controller-sigterm.ts'
import { sigtermDuringStreams } from './sigterm-during-streams.ts'

/**
 * Scenario 10: SIGTERM to a scorer (one of two) and then to the edge, each with streams
 * in flight through it, and to the leading controller while changes apply. Each stops
 * taking new work, finishes what it has (up to its drain deadline, 20 s here), and exits
 * 0; the controller releases its Lease.
 */
export const gracefulShutdown: ChaosScenario = {
  id: 'graceful-shutdown',
  title: '10. graceful shutdown (SIGTERM)',
  async run(context) {
    const full = context.size === 'full'
    // Streams of up to about 2.5 s (short) or 8 s (full) at time scale 1.
    const phase = { streams: full ? 32 : 8, maxTokens: full ? 300 : 80, seed: context.seed }
    const stack = await startChaosStack({
      redisUrl: context.redisUrl,
      pods: 3,
      scorers: 2,
      timeScale: 1,
      seed: context.seed,
      scorerArgs: ['--drain-timeout', '20s'],
      edgeArgs: ['--drain-timeout', '20s'],
    })
    const phases = []
    try {
      const scorer = stack.scorers[0]
      if (!scorer) throw new Error('no scorer')
      phases.push(
        await sigtermDuringStreams(stack, scorer, {
          ...phase,
          alongside: true,
          nowMs: context.nowMs,
        }),
      )
      phases.push(
        await sigtermDuringStreams(stack, stack.edge, {
          ...phase,
          alongside: false,
          nowMs: context.nowMs,
        }),
      )
    } finally {
      await stack.close()
    }
    const controller = await controllerSigterm({
      redisUrl: context.redisUrl,
      changesMs: full ? 4_000 : 1_500,
      nowMs: context.nowMs,
    })
    return {
      ...tallyOutcomes(phases.flatMap((p) => p.outcomes)),
      convergence: {
        what: 'last change published by the next leader',
        ms: controller.convergedMs,
        targetMs: null,
      },
      checks: [...phases.flatMap((p) => p.checks), ...controller.checks],
      notes: [...phases.flatMap((p) => p.notes), ...controller.notes],
    }
  },
}
