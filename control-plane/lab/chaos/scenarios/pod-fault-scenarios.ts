import type { ChaosScenario } from '../chaos-scenario.ts'
import { kvEventsLostDelayed } from './kv-events-lost-delayed.ts'
import { podKilledMidStream } from './pod-killed-mid-stream.ts'
import { podRestarted } from './pod-restarted.ts'

/** Scenarios 1-3: pods dying, restarting, and losing or delaying their KV events. */
export const podFaultScenarios: readonly ChaosScenario[] = [
  podKilledMidStream,
  podRestarted,
  kvEventsLostDelayed,
]
