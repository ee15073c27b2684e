import type { ChaosScenario } from '../chaos-scenario.ts'
import { bedrockStorms } from './bedrock-storms.ts'
import { redisUnavailable } from './redis-unavailable.ts'

/** Scenarios 6-7: Redis going away, Bedrock throttling and failing. */
export const dependencyFaultScenarios: readonly ChaosScenario[] = [redisUnavailable, bedrockStorms]
