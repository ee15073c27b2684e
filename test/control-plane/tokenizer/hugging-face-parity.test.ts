import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { ChatMessageInput } from '../../../control-plane/tokenizer/chat-message.ts'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'

/**
 * Cases computed by the Python stack of a vLLM pod (tokenizers + transformers); see
 * fixtures/make-hf-qwen3-golden.py for how and with which versions.
 */
type GoldenCase =
  | { kind: 'encode'; text: string; ids: number[] }
  | { kind: 'decode'; ids: number[]; text: string; skipSpecial: string }
  | {
      kind: 'chat'
      messages: ChatMessageInput[]
      addGenerationPrompt: boolean
      chatTemplateKwargs: Record<string, unknown>
      text: string
      ids: number[]
    }

const cases: GoldenCase[] = readFileSync(
  new URL('fixtures/hf-qwen3-golden.jsonl', import.meta.url),
  'utf8',
)
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line))

const tokenizer = createTokenizer('qwen3')
const ofKind = <K extends GoldenCase['kind']>(kind: K) =>
  cases.filter((c): c is Extract<GoldenCase, { kind: K }> => c.kind === kind)

describe('parity with Hugging Face (the tokenizer of a vLLM pod)', () => {
  it('encodes tricky text to the same ids', () => {
    const encodes = ofKind('encode')
    expect(encodes.length).toBeGreaterThan(200)
    for (const { text, ids } of encodes)
      expect(tokenizer.encode(text), JSON.stringify(text)).toEqual(ids)
  })

  it('decodes ids, special or partial UTF-8, to the same text', () => {
    for (const { ids, text, skipSpecial } of ofKind('decode')) {
      expect(tokenizer.decode(ids), JSON.stringify(ids)).toBe(text)
      expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe(skipSpecial)
    }
  })

  it('renders and tokenizes random conversations as vLLM does', () => {
    const chats = ofKind('chat')
    expect(
      chats.filter((c) => JSON.stringify(c.messages).includes('tool_calls')).length,
    ).toBeGreaterThan(10)
    for (const chat of chats) {
      const prompt = tokenizer.applyChatTemplate(chat.messages, {
        addGenerationPrompt: chat.addGenerationPrompt,
        chatTemplateKwargs: chat.chatTemplateKwargs,
      })
      expect(prompt.text, JSON.stringify(chat.messages)).toBe(chat.text)
      expect(prompt.tokenIds).toEqual(chat.ids)
    }
  })
})
