import { describe, expect, it } from 'vitest'
import {
  decisionOf,
  lookup,
  matchedBlocks,
  model,
  poolSpec,
  send,
  systemChat,
  until,
  words,
} from '../../support/scorer-stack.ts'
import { useScorerStacks } from '../../support/use-scorer-stacks.ts'

const stacks = useScorerStacks()

const adapter = 'sql-lora'

const chat = (servedModel: string, system: string, question: string) =>
  systemChat(system, question, { model: servedModel, ignore_eos: true })

describe('a LoRA adapter through the scorer to simulated pods', () => {
  it('keys the adapter’s blocks apart from the base model’s and routes its prefix back to them', async () => {
    const stack = await stacks.start({
      pods: 3,
      loraAdapters: [adapter],
      spec: poolSpec({
        models: [
          { name: model, tokenizer: 'qwen3', maxContextTokens: 32_768, loraAdapters: [adapter] },
        ],
      } as never),
    })
    const system = words(41, 500)
    const first = await send(stack, '/v1/chat/completions', chat(adapter, system, 'first'))
    expect(first.status).toBe(200)
    expect(JSON.parse(first.text).model).toBe(adapter)
    const warm = decisionOf(first.headers).pod as string
    const { messages } = chat(adapter, system, 'second')
    // The pod's events carry the adapter's name: the index holds the blocks under it only.
    await until(async () => (await matchedBlocks(stack, { model: adapter, messages }, warm)) > 10)
    const base = await lookup(stack, { model, messages })
    expect(base.pods.every((p) => p.matchedBlocks === 0)).toBe(true)
    for (const question of ['second', 'third']) {
      const again = await send(stack, '/v1/chat/completions', chat(adapter, system, question))
      expect(decisionOf(again.headers).pod).toBe(warm)
      expect(JSON.parse(again.text).usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(1000)
    }
  })
})
