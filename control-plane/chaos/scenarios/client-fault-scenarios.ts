import type { ChaosScenario } from '../chaos-scenario.ts'
import { concurrentStreamsLoad } from './concurrent-streams-load.ts'

/** Scenarios 8-10: hostile clients, load, graceful shutdown. */
export const clientFaultScenarios: readonly ChaosScenario[] = [concurrentStreamsLoad]
