import type { ChaosScenario } from '../chaos-scenario.ts'
import { concurrentStreamsLoad } from './concurrent-streams-load.ts'
import { gracefulShutdown } from './graceful-shutdown.ts'
import { slowHostileClients } from './slow-hostile-clients.ts'

/** Scenarios 8-10: hostile clients, load, graceful shutdown. */
export const clientFaultScenarios: readonly ChaosScenario[] = [
  slowHostileClients,
  concurrentStreamsLoad,
  gracefulShutdown,
]
