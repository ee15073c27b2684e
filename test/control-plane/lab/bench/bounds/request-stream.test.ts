import { beforeAll, describe, expect, it } from 'vitest'
import { infiniteHitCeiling } from '../../../../../control-plane/lab/bench/bounds/hit-ceiling.ts'
import {
  createBlockKeyer,
  type PromptBuilder,
  requestStreamOf,
} from '../../../../../control-plane/lab/bench/bounds/request-stream.ts'
import {
  type ChatFrame,
  chatPromptIds,
  createChatFrame,
} from '../../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { parseDataSpec } from '../../../../../control-plane/lab/bench/data-spec.ts'
import { createWorkload, type Workload } from '../../../../../control-plane/lab/bench/workload.ts'
import { loadSimModelAssets } from '../../../../../control-plane/lab/sim/sim-model-assets.ts'

let assets: ReturnType<typeof loadSimModelAssets>
let frame: ChatFrame
let build: PromptBuilder
beforeAll(() => {
  assets = loadSimModelAssets()
  frame = createChatFrame(assets.tokenizer)
  build = (prefix, turns) => chatPromptIds(frame, prefix, turns)
})
const workloadOf = (data: string): Workload =>
  createWorkload(parseDataSpec(data), 42, assets.vocabulary)
const userPrompt = (content: number) =>
  frame.open.user.length + content + frame.close.length + frame.generation.length

describe('createBlockKeyer', () => {
  it('gives equal keys to equal prefixes only', () => {
    const keys = createBlockKeyer(2)
    expect(keys([1, 2, 3, 4, 5], 2)).toEqual([0, 1])
    expect(keys([1, 2, 3, 4], 2)).toEqual([0, 1])
    // The same second block after another first block is another block.
    expect(keys([9, 9, 3, 4], 2)).toEqual([2, 3])
    expect(keys([1, 2, 7, 7], 1)).toEqual([0])
  })
})

describe('requestStreamOf', () => {
  it('turns one-turn requests into their full prompt and answer blocks', () => {
    const s = requestStreamOf(workloadOf('prompt_tokens=500,output_tokens=40'), build, 10)
    expect(s.blockSize).toBe(16)
    expect(s.requests).toHaveLength(10)
    const p = userPrompt(500)
    for (const r of s.requests) {
      expect(r.promptTokens).toBe(p)
      expect(r.outputTokens).toBe(40)
      expect(r.promptBlocks).toHaveLength(Math.floor(p / 16))
      // KV for the prompt and all but the last generated token.
      expect(r.promptBlocks.length + r.answerBlocks.length).toBe(Math.floor((p + 39) / 16))
    }
    // Random words: no two requests share a block.
    const all = s.requests.flatMap((r) => [...r.promptBlocks, ...r.answerBlocks])
    expect(new Set(all).size).toBe(all.length)
  })

  it('gives a shared system prompt the same leading blocks: the exact known ceiling', () => {
    const s = requestStreamOf(
      workloadOf('prefix_count=1,prefix_tokens=4096,prompt_tokens=256,output_tokens=8'),
      build,
      20,
    )
    const system = frame.open.system.length + 4096 + frame.close.length
    const shared = Math.floor(system / 16)
    const first = s.requests[0]?.promptBlocks ?? []
    for (const r of s.requests.slice(1)) {
      expect(r.promptBlocks.slice(0, shared)).toEqual(first.slice(0, shared))
      expect(r.promptBlocks[shared]).not.toBe(first[shared])
    }
    const ceiling = infiniteHitCeiling(s)
    expect(ceiling.hitTokens).toBe(19 * shared * 16)
    expect(ceiling.fraction).toBe((19 * shared * 16) / (20 * (system + userPrompt(256))))
  })

  it("carries a conversation's history, answers included, into its later turns", () => {
    const workload = workloadOf('turns=3,first_prompt_tokens=300,prompt_tokens=50,output_tokens=64')
    const s = requestStreamOf(workload, build, 7)
    expect(s.requests.map((r) => [r.conversation, r.turn])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
      [2, 0],
    ])
    const [t0, t1, t2] = s.requests
    if (!t0 || !t1 || !t2) throw new Error('three turns')
    const left = [...t0.promptBlocks, ...t0.answerBlocks]
    expect(t1.promptBlocks.slice(0, left.length)).toEqual(left)
    expect(t1.promptTokens).toBe(userPrompt(300) + 64 + frame.close.length + userPrompt(50))
    const leftByT1 = [...t1.promptBlocks, ...t1.answerBlocks]
    expect(t2.promptBlocks.slice(0, leftByT1.length)).toEqual(leftByT1)
    // Another conversation's answers are its own, even of the same length.
    const other = s.requests[4]
    expect(other?.promptBlocks[0]).not.toBe(t1.promptBlocks[0])
  })

  it('stops where a finite workload runs out of conversations', () => {
    const inner = workloadOf('prompt_tokens=100,output_tokens=4')
    const finite: Workload = {
      ...inner,
      size: 3,
      conversation: (index) => {
        if (index >= 3) throw new Error(`no conversation ${index}`)
        return inner.conversation(index)
      },
    }
    expect(requestStreamOf(finite, build, 10).requests).toHaveLength(3)
  })
})
