import type { ChaosContext, ChaosScenario } from './chaos-scenario.ts'
import type { ScenarioResult } from './scenario-result.ts'

/**
 * Runs the scenarios one after another, each on a stack of its own. A scenario that
 * throws is reported as failed with what it threw, and the others still run.
 */
export async function runChaos(
  scenarios: readonly ChaosScenario[],
  context: ChaosContext,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = []
  for (const scenario of scenarios) {
    const started = context.nowMs()
    context.log(`chaos: ${scenario.id} (${context.size})`)
    try {
      const body = await scenario.run(context)
      results.push({
        id: scenario.id,
        title: scenario.title,
        ...body,
        durationMs: context.nowMs() - started,
      })
    } catch (error) {
      results.push(crashed(scenario, error, context.nowMs() - started))
    }
    const last = results.at(-1)
    if (last)
      context.log(
        `chaos: ${scenario.id}: ${last.requests} sent, ${last.completed} completed, ${last.cleanErrors} clean errors, ${last.lost} lost`,
      )
  }
  return results
}

function crashed(scenario: ChaosScenario, error: unknown, durationMs: number): ScenarioResult {
  return {
    id: scenario.id,
    title: scenario.title,
    requests: 0,
    completed: 0,
    cleanErrors: 0,
    lost: 0,
    lostWhy: [],
    errorKinds: [],
    convergence: null,
    checks: [
      { name: 'the scenario ran', ok: false, detail: (error as Error).stack ?? String(error) },
    ],
    notes: [],
    durationMs,
  }
}
