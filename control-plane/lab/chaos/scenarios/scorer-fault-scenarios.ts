import type { ChaosScenario } from '../chaos-scenario.ts'
import { scorerKilledUnderLoad } from './scorer-killed-under-load.ts'
import { scorerRestartedWithIndex } from './scorer-restarted-with-index.ts'

/** Scenarios 4-5: scorers restarted and killed. */
export const scorerFaultScenarios: readonly ChaosScenario[] = [
  scorerRestartedWithIndex,
  scorerKilledUnderLoad,
]
