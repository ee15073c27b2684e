import { z } from 'zod'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { ScenarioBody } from './scenario-result.ts'

/** CI's short version of a scenario, or the full one `npm run chaos` records. */
export const ChaosSize = z.enum(['short', 'full'])
export type ChaosSize = z.infer<typeof ChaosSize>

export function chaosSize(text: string): ChaosSize {
  const parsed = ChaosSize.safeParse(text)
  if (!parsed.success) throw new KinfError('invalid_request', `--size "${text}": short or full`)
  return parsed.data
}

/** What every scenario is given: nothing global, so scenarios can run in any order. */
export interface ChaosContext {
  size: ChaosSize
  seed: number
  /** The real Redis (the stack reaches it through a proxy it can cut). */
  redisUrl: string
  log: (line: string) => void
  nowMs: () => number
}

export interface ChaosScenario {
  /** Stable and kebab-case: `npm run chaos -- --scenario <id>`. */
  id: string
  title: string
  run(context: ChaosContext): Promise<ScenarioBody>
}

/**
 * How long until `settled` first holds, polling every `everyMs`, or null when it has not
 * after `limitMs`: the convergence time a scenario reports.
 */
export async function timeUntil(
  settled: () => Promise<boolean>,
  options: { limitMs: number; everyMs?: number; nowMs: () => number },
): Promise<number | null> {
  const started = options.nowMs()
  for (;;) {
    if (await settled().catch(() => false)) return options.nowMs() - started
    if (options.nowMs() - started > options.limitMs) return null
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 50))
  }
}
