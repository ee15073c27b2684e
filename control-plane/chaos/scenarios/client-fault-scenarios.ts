import type { ChaosScenario } from '../chaos-scenario.ts'

/** Scenarios 8-10: hostile clients, load, graceful shutdown. */
export const clientFaultScenarios: readonly ChaosScenario[] = []
