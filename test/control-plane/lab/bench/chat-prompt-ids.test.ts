import { beforeAll, describe, expect, it } from 'vitest'
import {
  type ChatFrame,
  type ChatTurnIds,
  chatPromptIds,
  createChatFrame,
} from '../../../../control-plane/lab/bench/chat-prompt-ids.ts'
import { randomWords } from '../../../../control-plane/lab/bench/workload.ts'
import { loadSimModelAssets } from '../../../../control-plane/lab/sim/sim-model-assets.ts'
import type { VllmChatMessageInput } from '../../../../control-plane/tokenizer/vllm-chat-message.ts'
import { createSeededRandom } from '../../../../shared/random/create-seeded-random.ts'

let assets: ReturnType<typeof loadSimModelAssets>
let frame: ChatFrame

beforeAll(() => {
  assets = loadSimModelAssets()
  frame = createChatFrame(assets.tokenizer)
})

const words = (count: number, random: () => number) => randomWords(assets.vocabulary, count, random)

/** The ids the pod computes: the conversation's text through the chat template and tokenizer. */
function templateIds(prefix: readonly number[] | null, turns: readonly ChatTurnIds[]): number[] {
  const text = (ids: readonly number[]) => assets.tokenizer.decode(ids)
  const messages: VllmChatMessageInput[] = []
  if (prefix !== null) messages.push({ role: 'system', content: text(prefix) })
  for (const turn of turns) {
    messages.push({ role: 'user', content: text(turn.userIds) })
    if (turn.assistantIds !== undefined)
      messages.push({ role: 'assistant', content: text(turn.assistantIds) })
  }
  return assets.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }).tokenIds
}

describe('createChatFrame', () => {
  it('is the tokens of the Qwen3 chat markup', () => {
    const tokenizer = assets.tokenizer
    const decode = (ids: readonly number[]) => tokenizer.decode(ids)
    expect(frame.open.user[0]).toBe(tokenizer.tokenToId('<|im_start|>'))
    expect(frame.close[0]).toBe(tokenizer.tokenToId('<|im_end|>'))
    expect(decode(frame.open.system)).toBe('<|im_start|>system\n')
    expect(decode(frame.open.user)).toBe('<|im_start|>user\n')
    expect(decode(frame.open.assistant)).toBe('<|im_start|>assistant\n')
    expect(decode(frame.close)).toBe('<|im_end|>\n')
    expect(frame.generation).toEqual(tokenizer.encode('<|im_start|>assistant\n'))
  })
})

describe('chatPromptIds equals the tokenizer over the chat template', () => {
  it('for a system prefix and one user turn', () => {
    const random = createSeededRandom(1)
    const prefix = words(300, random)
    const turns = [{ userIds: words(40, random) }]
    const ids = chatPromptIds(frame, prefix, turns)
    expect(ids).toEqual(templateIds(prefix, turns))
    expect(ids).toHaveLength(
      frame.open.system.length +
        300 +
        frame.close.length +
        frame.open.user.length +
        40 +
        frame.close.length +
        frame.generation.length,
    )
  })

  it('for one user turn without a prefix', () => {
    const random = createSeededRandom(2)
    const turns = [{ userIds: words(25, random) }]
    const ids = chatPromptIds(frame, null, turns)
    expect(ids).toEqual(templateIds(null, turns))
    expect(ids.slice(0, frame.open.user.length)).toEqual([...frame.open.user])
  })

  it('for a one-word user turn', () => {
    const turns = [{ userIds: words(1, createSeededRandom(3)) }]
    expect(chatPromptIds(frame, null, turns)).toEqual(templateIds(null, turns))
  })

  it('for multi-turn conversations whose answers are generated words, ending in the generation prompt', () => {
    for (let seed = 10; seed < 30; seed++) {
      const random = createSeededRandom(seed)
      const withPrefix = seed % 2 === 0
      const prefix = withPrefix ? words(1 + Math.floor(random() * 200), random) : null
      const count = 2 + Math.floor(random() * 4)
      const turns: ChatTurnIds[] = Array.from({ length: count }, (_, i) => ({
        userIds: words(1 + Math.floor(random() * 60), random),
        ...(i < count - 1 && { assistantIds: words(1 + Math.floor(random() * 60), random) }),
      }))
      const ids = chatPromptIds(frame, prefix, turns)
      expect(ids, `seed ${seed}`).toEqual(templateIds(prefix, turns))
      expect(ids.slice(-frame.generation.length)).toEqual([...frame.generation])
    }
  })

  it('extends the previous turn’s prompt by the answer, <|im_end|>\\n and the new turn', () => {
    const random = createSeededRandom(4)
    const prefix = words(50, random)
    const first = { userIds: words(30, random) }
    const answer = words(20, random)
    const before = chatPromptIds(frame, prefix, [first])
    const after = chatPromptIds(frame, prefix, [
      { ...first, assistantIds: answer },
      { userIds: words(10, random) },
    ])
    expect(after.slice(0, before.length + answer.length + frame.close.length)).toEqual([
      ...before,
      ...answer,
      ...frame.close,
    ])
  })
})
