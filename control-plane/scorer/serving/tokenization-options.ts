import { z } from 'zod'

const share = z
  .number({ error: 'must be a share between 0 and 1' })
  .min(0, { error: 'must be a share between 0 and 1' })
  .max(1, { error: 'must be a share between 0 and 1' })

/**
 * When disagreement between the scorer's counts and the pods' becomes a pool condition
 * (TokenizationAgrees False, see tokenization-guard.ts): the share of a pool's answered
 * requests over the window whose counts differ, once enough of them were compared.
 */
export const TokenizationGuardOptions = z.strictObject({
  windowMs: z
    .int()
    .positive()
    .default(5 * 60_000)
    .describe('The window the disagreement rate is taken over (5 minutes)'),
  minObservations: z
    .int()
    .min(1)
    .default(10)
    .describe('Comparisons in the window before the condition changes either way'),
  maxPromptDisagreement: share
    .default(0.05)
    .describe(
      'Share of requests whose prompt_tokens differ from the scorer count past which the pool is marked: the same tokenizer agrees on every request',
    ),
  maxCachedDisagreement: share
    .default(0.5)
    .describe(
      'Share of requests whose cached_tokens differ by a block or more from the prediction past which the pool is marked: evictions and concurrent requests make some differ on a sound index',
    ),
})
export type TokenizationGuardOptions = z.infer<typeof TokenizationGuardOptions>
export type TokenizationGuardOptionsInput = z.input<typeof TokenizationGuardOptions>

/** How the scorer loads its pools' tokenizers and checks them against the pods. */
export const TokenizationOptions = z.strictObject({
  retryMs: z
    .int()
    .positive()
    .default(60_000)
    .describe(
      'How often a tokenizer that could not be loaded is tried again (a mounted volume may appear later); a new snapshot tries it at once',
    ),
  guard: TokenizationGuardOptions.prefault({}),
})
export type TokenizationOptions = z.infer<typeof TokenizationOptions>
