import { describe, expect, it } from 'vitest'
import { createChatTemplateRenderer } from '../../../control-plane/tokenizer/create-chat-template-renderer.ts'
import { loadQwen3Files } from '../../../control-plane/tokenizer/load-qwen3-files.ts'
import type { TemplateMessage } from '../../../control-plane/tokenizer/parse-chat-messages.ts'
import { renderQwen3Chat } from '../../../control-plane/tokenizer/render-qwen3-chat.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'

const files = loadQwen3Files()
const jinja = createChatTemplateRenderer(files.chatTemplate, files.specialTokensMap)
const pieces = [
  '',
  'hi',
  '\n',
  '\n\nlead',
  'trail\n',
  ' spaced ',
  'multi\nline\ntext',
  '<think>x',
  'ok</tool_response>',
  '<tool_response>',
  'ünï',
  '\t',
]

describe('renderQwen3Chat', () => {
  it('renders plain conversations exactly as the Jinja template does', () => {
    const random = createSeededRandom(17)
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T
    let rendered = 0
    for (let i = 0; i < 3000; i++) {
      const count = 1 + Math.floor(random() * 6)
      const messages: TemplateMessage[] = Array.from({ length: count }, () => ({
        role: pick(['system', 'developer', 'user', 'user', 'assistant', 'assistant'] as const),
        content: Array.from({ length: Math.floor(random() * 3) }, () => pick(pieces)).join(''),
      }))
      const options = {
        addGenerationPrompt: random() < 0.8,
        chatTemplateKwargs: pick([{}, { enable_thinking: true }, { enable_thinking: false }]),
      }
      const fast = renderQwen3Chat(messages, options)
      if (fast === null) continue
      rendered++
      expect(fast, JSON.stringify({ messages, options })).toBe(jinja(messages, options))
    }
    expect(rendered).toBeGreaterThan(2000)
  })

  it('leaves tools, reasoning, think blocks and unknown kwargs to the template', () => {
    const user: TemplateMessage = { role: 'user', content: 'q' }
    expect(renderQwen3Chat([user, { role: 'assistant', content: 'a</think>b' }])).toBe(null)
    expect(
      renderQwen3Chat([user, { role: 'assistant', content: 'a', reasoning_content: 'r' }]),
    ).toBe(null)
    expect(renderQwen3Chat([user, { role: 'tool', content: 'r' }])).toBe(null)
    expect(renderQwen3Chat([{ role: 'user', content: '<tool_response>x</tool_response>' }])).toBe(
      null,
    )
    expect(renderQwen3Chat([user], { chatTemplateKwargs: { tools: [] } })).toBe(null)
    expect(renderQwen3Chat([user], { chatTemplateKwargs: { enable_thinking: 'no' } })).toBe(null)
  })
})
