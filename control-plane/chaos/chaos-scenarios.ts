import type { ChaosScenario } from './chaos-scenario.ts'
import { podKilledMidStream } from './scenarios/pod-killed-mid-stream.ts'

/** Every scenario, in the order the issue lists them and the report shows them. */
export const chaosScenarios: readonly ChaosScenario[] = [podKilledMidStream]
