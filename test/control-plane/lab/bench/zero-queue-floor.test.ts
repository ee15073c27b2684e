import { beforeAll, describe, expect, it } from 'vitest'
import {
  type ChatFrame,
  createChatFrame,
} from '../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { parseDataSpec } from '../../../../control-plane/lab/bench/data-spec.ts'
import { parseDesTimingOptions } from '../../../../control-plane/lab/bench/des/des-timing-options.ts'
import { createWorkload, type Workload } from '../../../../control-plane/lab/bench/workload.ts'
import { zeroQueueFloor } from '../../../../control-plane/lab/bench/zero-queue-floor.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import { l40s27bFp8 } from '../../../../shared/gpu/gpu-profile.ts'
import { createStepCostModel } from '../../../../shared/gpu/step-cost-model.ts'

let assets: ReturnType<typeof loadSimModelAssets>
let frame: ChatFrame
const cost = createStepCostModel(l40s27bFp8)
const budget = l40s27bFp8.scheduler.maxNumBatchedTokens

beforeAll(() => {
  assets = loadSimModelAssets()
  frame = createChatFrame(assets.tokenizer)
})

const workloadOf = (data: string): Workload =>
  createWorkload(parseDataSpec(data), 42, assets.vocabulary)

/** Prefill of tokens [from, to) of a prompt, alone on the pod, in budget-sized chunks. */
function prefillMs(from: number, to: number): number {
  let total = 0
  for (let done = from; done < to; ) {
    const chunk = Math.min(budget, to - done)
    total += cost.stepMs({
      tokens: chunk,
      decodeContext: 0,
      prefillContext: done + chunk,
      prefillAttention: chunk * (done + chunk / 2),
    })
    done += chunk
  }
  return total
}

/** Tokens of a one-turn prompt with `content` user tokens, without a system message. */
const userPromptLength = (content: number) =>
  frame.open.user.length + content + frame.close.length + frame.generation.length

describe('zeroQueueFloor', () => {
  it('is the prefill of the whole prompt plus the network both ways when nothing is shared', () => {
    const floor = zeroQueueFloor(
      workloadOf('prompt_tokens=512,output_tokens=8'),
      frame,
      l40s27bFp8,
      50,
    )
    const expected = prefillMs(0, userPromptLength(512)) + 2 * 0.5
    expect(floor.requests).toBe(50)
    expect(floor.medianMs).toBeCloseTo(expected, 9)
    expect(floor.p90Ms).toBeCloseTo(expected, 9)
  })

  it('chunks a prompt longer than the token budget', () => {
    const length = userPromptLength(4352)
    expect(length).toBeGreaterThan(2 * budget)
    const floor = zeroQueueFloor(
      workloadOf('prompt_tokens=4352,output_tokens=8'),
      frame,
      l40s27bFp8,
      5,
    )
    const expected = prefillMs(0, length) + 1
    expect(floor.medianMs).toBeCloseTo(expected, 9)
    // Not one step over the whole prompt: each chunk is a step of its own.
    const oneStep = cost.stepMs({
      tokens: length,
      decodeContext: 0,
      prefillContext: length,
      prefillAttention: (length * length) / 2,
    })
    expect(Math.abs(floor.medianMs - (oneStep + 1))).toBeGreaterThan(1)
  })

  it('adds the given network delay twice', () => {
    const workload = workloadOf('prompt_tokens=512,output_tokens=8')
    const base = zeroQueueFloor(workload, frame, l40s27bFp8, 10, 0).medianMs
    const slow = zeroQueueFloor(workload, frame, l40s27bFp8, 10, 25).medianMs
    expect(slow - base).toBeCloseTo(50, 9)
    expect(base).toBeCloseTo(prefillMs(0, userPromptLength(512)), 9)
  })

  it("adds the DES's network delay when given none", () => {
    const workload = workloadOf('prompt_tokens=512,output_tokens=8')
    const { networkDelayMs } = parseDesTimingOptions({})
    expect(zeroQueueFloor(workload, frame, l40s27bFp8, 10)).toEqual(
      zeroQueueFloor(workload, frame, l40s27bFp8, 10, networkDelayMs),
    )
    expect(() => zeroQueueFloor(workload, frame, l40s27bFp8, 10, -1)).toThrow(/networkDelayMs/)
  })

  it('orders the floors of prompts of different lengths: median and p90', () => {
    // Uniform 100..4000 tokens: p90 is well above the median.
    const floor = zeroQueueFloor(
      workloadOf('prompt_tokens=2000,prompt_tokens_min=100,prompt_tokens_max=4000,output_tokens=8'),
      frame,
      l40s27bFp8,
      200,
    )
    expect(floor.p90Ms).toBeGreaterThan(floor.medianMs * 1.3)
    expect(floor.medianMs).toBeGreaterThan(prefillMs(0, userPromptLength(100)))
    expect(floor.p90Ms).toBeLessThanOrEqual(prefillMs(0, userPromptLength(4000)) + 1 + 1e-9)
  })

  it('only prefills what follows a shared system prompt, in whole blocks', () => {
    const floor = zeroQueueFloor(
      workloadOf('prefix_count=4,prefix_tokens=4096,prompt_tokens=256,output_tokens=8'),
      frame,
      l40s27bFp8,
      20,
    )
    const system = frame.open.system.length + 4096 + frame.close.length
    const total = system + userPromptLength(256)
    const block = l40s27bFp8.blockSize
    const cached = Math.floor(system / block) * block
    expect(floor.medianMs).toBeCloseTo(prefillMs(cached, total) + 1, 9)
    const unshared = zeroQueueFloor(
      workloadOf('prompt_tokens=4352,output_tokens=8'),
      frame,
      l40s27bFp8,
      20,
    )
    expect(floor.medianMs).toBeLessThan(unshared.medianMs / 5)
  })

  it('gives later turns of a conversation, whose history is cached, lower floors than first turns', () => {
    const workload = workloadOf(
      'turns=3,prefix_count=2,prefix_tokens=1024,first_prompt_tokens=2048,prompt_tokens=256,output_tokens=64',
    )
    // The requests are taken conversation by conversation, turn by turn.
    const first = zeroQueueFloor(workload, frame, l40s27bFp8, 1)
    const firstTwo = zeroQueueFloor(workload, frame, l40s27bFp8, 2)
    const all = zeroQueueFloor(workload, frame, l40s27bFp8, 3)
    expect(firstTwo.p90Ms).toBe(first.medianMs)
    expect(firstTwo.medianMs).toBeLessThan(first.medianMs / 3)
    expect(all.p90Ms).toBe(first.medianMs)
    expect(all.medianMs).toBeLessThan(first.medianMs / 3)

    // The second turn: everything up to the first answer and its <|im_end|>\n is cached.
    const system = frame.open.system.length + 1024 + frame.close.length
    const firstPrompt = system + userPromptLength(2048)
    const known = firstPrompt + 64 + frame.close.length
    const secondPrompt = known + userPromptLength(256)
    const block = l40s27bFp8.blockSize
    expect(firstTwo.medianMs).toBeCloseTo(
      prefillMs(Math.floor(known / block) * block, secondPrompt) + 1,
      9,
    )
    expect(first.medianMs).toBeCloseTo(
      prefillMs(Math.floor(system / block) * block, firstPrompt) + 1,
      9,
    )
  })

  it('gives the first turns of multi-turn the floor of the same prompt in a one-turn workload', () => {
    const multi = workloadOf('turns=4,first_prompt_tokens=1000,prompt_tokens=100,output_tokens=8')
    const single = workloadOf('prompt_tokens=1000,output_tokens=8')
    expect(zeroQueueFloor(multi, frame, l40s27bFp8, 1).medianMs).toBeCloseTo(
      zeroQueueFloor(single, frame, l40s27bFp8, 1).medianMs,
      9,
    )
  })
})
