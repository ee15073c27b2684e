import type { GpuProfile } from '../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../shared/gpu/step-cost-model.ts'
import { type ChatFrame, type ChatTurnIds, chatPromptIds } from './chat-prompt-ids.ts'
import { parseDesTimingOptions } from './des/des-timing-options.ts'
import type { Workload } from './workload.ts'

export interface ZeroQueueFloor {
  medianMs: number
  p90Ms: number
  /** Requests it was computed over. */
  requests: number
}

/**
 * The TTFT each request would get from an idle pod already holding everything it could
 * have cached (its system prompt, its conversation so far): the step-cost model's time
 * to prefill the rest in budget-sized chunks, plus the network both ways (`networkMs`
 * one way, the DES's networkDelayMs by default). No router can beat it; the gap to it is
 * queueing and misses.
 */
export function zeroQueueFloor(
  workload: Workload,
  frame: ChatFrame,
  profile: GpuProfile,
  requests: number,
  networkMs?: number,
): ZeroQueueFloor {
  const network = parseDesTimingOptions({ networkDelayMs: networkMs }).networkDelayMs
  const cost = createStepCostModel(profile)
  const budget = profile.scheduler.maxNumBatchedTokens
  const block = profile.blockSize
  const floors: number[] = []
  for (let c = 0; floors.length < requests; c++) {
    const plan = workload.conversation(c)
    const prefix = plan.prefix?.ids ?? null
    const history: ChatTurnIds[] = []
    let known = prefix === null ? 0 : frame.open.system.length + prefix.length + frame.close.length
    for (const turn of plan.turns) {
      if (floors.length >= requests) break
      const prompt = chatPromptIds(frame, prefix, [...history, { userIds: turn.userIds }])
      // vLLM hits whole blocks only, and never the last prompt token.
      const cached = Math.min(
        Math.floor(known / block) * block,
        Math.floor((prompt.length - 1) / block) * block,
      )
      floors.push(prefillMs(cost.stepMs, prompt.length, cached, budget) + 2 * network)
      const answer = new Array<number>(turn.outputTokens).fill(0)
      history.push({ userIds: turn.userIds, assistantIds: answer })
      known = prompt.length + answer.length + frame.close.length
    }
  }
  const sorted = floors.sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? 0
  return { medianMs: at(0.5), p90Ms: at(0.9), requests: sorted.length }
}

function prefillMs(
  stepMs: ReturnType<typeof createStepCostModel>['stepMs'],
  promptTokens: number,
  cached: number,
  budget: number,
): number {
  let done = cached
  let total = 0
  while (done < promptTokens) {
    const chunk = Math.min(budget, promptTokens - done)
    total += stepMs({
      tokens: chunk,
      decodeContext: 0,
      prefillContext: done + chunk,
      prefillAttention: chunk * (done + chunk / 2),
    })
    done += chunk
  }
  return total
}
