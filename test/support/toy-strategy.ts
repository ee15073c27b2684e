import { z } from 'zod'
import { builtinPlugins, type Plugins } from '../../shared/plugins.ts'
import { defineStrategy } from '../../shared/routing/strategies/define-strategy.ts'
import { noCandidateDecision } from '../../shared/routing/strategies/no-candidate-decision.ts'
import { builtinStrategies } from '../../shared/routing/strategies/strategy-registry.ts'

/** The toy's parameters, as a contributor writes them: defaults and a description per field. */
export const PinnedParameters = z.strictObject({
  podIndex: z
    .int()
    .min(0)
    .max(1023)
    .default(0)
    .describe(
      'Position, in name order, of the candidate every request goes to (modulo the candidates).',
    ),
})

/**
 * A strategy that is not built in, declared as a contributor would declare one (one file, then
 * one registry line): every request goes to the same pod, whose choice is easy to see in a run.
 */
export const pinnedStrategy = defineStrategy({
  name: 'pinned',
  description: 'every request to one pod, for tests.',
  parameters: { block: 'pinned', schema: PinnedParameters },
  variants: { 'pinned-third': { podIndex: 2 } },
  create: ({ podIndex }) => ({
    name: 'pinned',
    choose(request, candidates) {
      if (candidates.length === 0) return noCandidateDecision('pinned')
      const byName = [...candidates].sort((a, b) => a.name.localeCompare(b.name))
      const chosen = byName[podIndex % byName.length]?.name ?? null
      return {
        pod: chosen,
        reason: `pinned: ${chosen} is candidate ${podIndex % byName.length} by name`,
        scores: candidates.map((pod) => ({
          pod: pod.name,
          cachedTokens: pod.cachedBlocks * request.blockSize,
          predictedTtftMs: null,
          score: null,
        })),
      }
    },
  }),
})

/** The built-in registry with the toy strategy added: the one registry line. */
export const toyStrategies = [...builtinStrategies, pinnedStrategy] as const

/** What the scorer is started with to run it: the built-in conditions beside. */
export const toyStrategyPlugins: Plugins = { ...builtinPlugins, strategies: toyStrategies }
