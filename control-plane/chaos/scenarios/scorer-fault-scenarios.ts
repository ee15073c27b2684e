import type { ChaosScenario } from '../chaos-scenario.ts'

/** Scenarios 4-5: scorers restarted and killed. */
export const scorerFaultScenarios: readonly ChaosScenario[] = []
