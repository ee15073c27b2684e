import type { ChaosScenario } from './chaos-scenario.ts'
import { clientFaultScenarios } from './scenarios/client-fault-scenarios.ts'
import { cpuOffloadTier } from './scenarios/cpu-offload-tier.ts'
import { dependencyFaultScenarios } from './scenarios/dependency-fault-scenarios.ts'
import { podFaultScenarios } from './scenarios/pod-fault-scenarios.ts'
import { scorerFaultScenarios } from './scenarios/scorer-fault-scenarios.ts'

/** Every scenario, in the order the report shows them. */
export const chaosScenarios: readonly ChaosScenario[] = [
  ...podFaultScenarios,
  ...scorerFaultScenarios,
  ...dependencyFaultScenarios,
  ...clientFaultScenarios,
  cpuOffloadTier,
]
