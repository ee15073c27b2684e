import { z } from 'zod'
import type { StrategyRegistry } from '../routing/strategies/define-strategy.ts'
import { type BuiltinStrategy, builtinStrategies } from '../routing/strategies/strategy-registry.ts'

type WithBlock = { parameters: { block: string; schema: z.ZodType } }

/** The parameter blocks of a registry's strategies, each optional, by block name. */
export type RoutingBlocks<Strategy, Side extends 'input' | 'output'> = {
  [S in Extract<Strategy, WithBlock> as S['parameters']['block']]?: Side extends 'input'
    ? z.input<S['parameters']['schema']>
    : z.output<S['parameters']['schema']>
}

/**
 * A pool's parsed `routing`: the strategy it names and the built-ins' blocks, typed. A pool
 * parsed with a larger registry has the same shape; its own strategies' blocks are there
 * untyped, for the strategy that reads them.
 */
export type RoutingSpec = { strategy: string } & RoutingBlocks<BuiltinStrategy, 'output'>
export type RoutingSpecInput = { strategy?: string } & RoutingBlocks<BuiltinStrategy, 'input'>

/**
 * The `routing` field of an InferencePool for a registry: `strategy` one of its names (the
 * first by default) and one optional block per strategy with parameters, which a pool may
 * set only for its own strategy (zod here, CEL in the CRD).
 */
export function routingSpecSchema(
  strategies: StrategyRegistry,
): z.ZodType<RoutingSpec, RoutingSpecInput> {
  const [first, ...others] = strategies.map((strategy) => strategy.name)
  if (first === undefined) throw new Error('a strategy registry needs at least one strategy')
  const blocks = strategies.flatMap(({ name, parameters }) =>
    parameters ? [{ strategy: name, block: parameters.block, schema: parameters.schema }] : [],
  )
  const strategy = z
    .enum([first, ...others])
    .describe(strategies.map(({ name, description }) => `${name}: ${description}`).join(' '))
  return z
    .strictObject({
      strategy: strategy.default(first),
      ...Object.fromEntries(
        blocks.map(({ strategy, block, schema }) => [
          block,
          schema.optional().describe(`Parameters of the ${strategy} strategy.`),
        ]),
      ),
    })
    .superRefine((routing, ctx) => {
      for (const { strategy, block } of blocks) {
        if (
          (routing as Record<string, unknown>)[block] !== undefined &&
          routing.strategy !== strategy
        ) {
          ctx.addIssue({
            code: 'custom',
            path: [block],
            message: `parameters for strategy "${strategy}" given, but strategy is "${routing.strategy}"`,
          })
        }
      }
    })
    .meta({
      'x-kubernetes-validations': blocks.map(({ strategy, block }) => ({
        rule: `!has(self.${block}) || self.strategy == '${strategy}'`,
        message: `${block} may only be set when strategy is ${strategy}`,
      })),
    })
    .describe('Routing strategy of the pool and its parameters.') as unknown as z.ZodType<
    RoutingSpec,
    RoutingSpecInput
  >
}

/** The `routing` field with the built-in strategies. */
export const RoutingSpec = routingSpecSchema(builtinStrategies)
