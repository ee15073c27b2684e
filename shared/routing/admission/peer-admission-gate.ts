import type { AdmissionGate } from './admission-gate.ts'
import { createDynamoBusyGate } from './dynamo-busy-gate.ts'
import { createLlmdFlowControlGate } from './llmd-flow-control-gate.ts'

/**
 * The admission a peer's routing strategy is deployed with, by the strategy's registry name;
 * null for a peer without admission of its own (every request admitted).
 */
export function peerAdmissionGate(strategyName: string): AdmissionGate | null {
  switch (strategyName) {
    // llm-d's EPP: the utilization detector's saturation gate sheds sheddable requests (429).
    case 'llmd-sticky':
      return createLlmdFlowControlGate()
    // GIE v1.5.0 ships the same utilization detector and legacy admission controller.
    case 'gie-default':
      return { ...createLlmdFlowControlGate(), name: 'GIE saturation detector' }
    // Dynamo's frontend: busy thresholds, rejecting when every worker is busy.
    case 'dynamo':
      return createDynamoBusyGate()
    // round-robin, least-request, sglang-cache-aware: their routers shed nothing by load;
    // kinference: its own saturation (pool-saturation.ts) is the policy's, not a gate here.
    default:
      return null
  }
}
