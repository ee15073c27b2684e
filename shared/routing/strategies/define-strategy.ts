import type { z } from 'zod'
import type { RoutingStrategy } from '../routing-strategy.ts'

/** What a strategy may need of the pool's pods beyond its own parameters. */
export interface StrategyPool {
  /** Per-step token budget (vLLM max_num_batched_tokens). */
  stepBudget: number
  /**
   * One full step of prefill over its duration, tokens/s: the pods' peak prefill throughput
   * from their GPU profile, what llm-d's calibrate.sh measures on a pod.
   */
  peakPrefillTokensPerSecond: number
  /** KV-cache bytes of one token (the GPU profile's), for pricing tier loads; null: unknown. */
  kvBytesPerToken?: number | null
}

/** A strategy's parameter block in a pool's `routing` spec. */
export interface StrategyParameters<Block extends string, Schema extends z.ZodType> {
  /** The field of `routing` that holds them, e.g. gieDefault for gie-default. */
  block: Block
  /** Their schema, with defaults and a description per field: the CRD is generated from it. */
  schema: Schema
}

/**
 * One routing strategy as a plugin: what a pool names in `routing.strategy`, the sentence
 * the CRD and docs give it, its parameters, and how to build one. Registering it (one line
 * in strategy-registry.ts, or a registry of one's own) puts it in the CRD schema, in
 * validation, in the scorer and in the benchmarks.
 */
export interface StrategyDefinition<
  Name extends string = string,
  Block extends string = string,
  Schema extends z.ZodType = z.ZodType,
> {
  name: Name
  /** One sentence ending in a full stop: the CRD's description of the strategy enum joins them. */
  description: string
  /** Absent for a strategy without parameters (a pool then may set no block for it). */
  parameters?: StrategyParameters<Block, Schema>
  /**
   * Named presets of its parameters that benchmarks run as routers of their own (a published
   * option of the peer, not its default), listed right after the strategy.
   */
  variants?: Readonly<Record<string, z.input<Schema>>>
  /** A new instance with its own state; parameters come validated, defaults applied. */
  create(parameters: z.output<Schema>, pool: StrategyPool): RoutingStrategy
}

/** Strategies by registration order; the first is what a pool gets when it names none. */
export type StrategyRegistry = readonly StrategyDefinition[]

/** A definition whose parameter block is known in its type. */
export type StrategyWithParameters<
  Name extends string,
  Block extends string,
  Schema extends z.ZodType,
> = StrategyDefinition<Name, Block, Schema> & { parameters: StrategyParameters<Block, Schema> }

/**
 * Keeps the literal name and block in the definition's type, so the built-in registry gives
 * typed `routing` blocks.
 */
export function defineStrategy<
  const Name extends string,
  const Block extends string,
  Schema extends z.ZodType,
>(
  definition: StrategyWithParameters<Name, Block, Schema>,
): StrategyWithParameters<Name, Block, Schema>
export function defineStrategy<const Name extends string>(
  definition: StrategyDefinition<Name, never, z.ZodType<Record<string, never>>> & {
    parameters?: undefined
  },
): StrategyDefinition<Name, never, z.ZodType<Record<string, never>>> & { parameters?: undefined }
export function defineStrategy(definition: StrategyDefinition): StrategyDefinition {
  return definition
}
