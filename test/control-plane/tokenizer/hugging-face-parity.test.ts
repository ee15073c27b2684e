import { beforeAll, describe, expect, it } from 'vitest'
import { createTokenizer } from '../../../control-plane/tokenizer/create-tokenizer.ts'
import { chatTemplateOptions as requestOptions } from '../../../control-plane/tokenizer/prompt-ids.ts'
import type { ChatPrompt, Tokenizer } from '../../../control-plane/tokenizer/tokenizer.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import {
  chatTemplateOptions,
  type GoldenChat,
  goldenFamilies,
  hasToolCalls,
  hasTools,
  readGoldens,
} from './fixtures/read-goldens.ts'

/**
 * The router's tokenizer against an independent reference, for every built-in family:
 * Hugging Face's Rust tokenizers and Python's jinja2 rendering the model's real template
 * as transformers does, after vLLM's message normalization (fixtures/make-goldens.ts).
 */

/** Where the router's prompt first departs from the golden one, for a readable failure. */
function departure(chat: GoldenChat, text: string, ids: readonly number[]): string | undefined {
  if (text !== chat.text) {
    let at = 0
    while (at < text.length && text[at] === chat.text[at]) at++
    const around = (s: string) => JSON.stringify(s.slice(Math.max(0, at - 30), at + 50))
    return `${chat.name}: text differs at ${at}: expected ${around(chat.text)}, got ${around(text)}`
  }
  const at = chat.ids.findIndex((id, i) => ids[i] !== id)
  if (at === -1 && ids.length === chat.ids.length) return undefined
  return `${chat.name}: ids differ at ${at === -1 ? chat.ids.length : at}: expected ${JSON.stringify(chat.ids.slice(at, at + 8))}, got ${JSON.stringify(ids.slice(at, at + 8))}`
}

describe('the goldens cannot pass vacuously', () => {
  it.each(goldenFamilies)(
    '%s has encodes, chats with tools and tool calls, and continuations',
    (family) => {
      const goldens = readGoldens(family)
      expect(goldens.encodes.length).toBeGreaterThanOrEqual(100)
      expect(goldens.chats.length).toBeGreaterThanOrEqual(40)
      expect(goldens.chats.filter(hasTools).length).toBeGreaterThanOrEqual(15)
      expect(goldens.chats.filter(hasToolCalls).length).toBeGreaterThanOrEqual(15)
      expect(
        goldens.chats.filter((c) => c.options.continueFinalMessage).length,
      ).toBeGreaterThanOrEqual(8)
      expect(
        goldens.chats.filter((c) => !c.options.addGenerationPrompt).length,
      ).toBeGreaterThanOrEqual(8)
      expect(goldens.errors.length).toBeGreaterThanOrEqual(1)
    },
  )
})

describe.each(goldenFamilies)('%s: the router tokenizes as Hugging Face does', (family) => {
  const goldens = readGoldens(family)
  let tokenizer: Tokenizer
  beforeAll(() => {
    // The goldens rendered strftime_now at this instant (gpt-oss prints the date).
    tokenizer = createTokenizer(family, { now: () => Date.parse(goldens.meta.now) })
  })

  it('encodes tricky text to the same ids', () => {
    for (const { text, ids } of goldens.encodes) {
      expect(tokenizer.encode(text, { addSpecialTokens: false }), JSON.stringify(text)).toEqual(ids)
    }
  })

  it.runIf(goldens.decodes.length > 0)(
    'decodes ids, special or partial UTF-8, to the same text',
    () => {
      for (const { ids, text, skipSpecial } of goldens.decodes) {
        expect(tokenizer.decode(ids), JSON.stringify(ids)).toBe(text)
        expect(tokenizer.decode(ids, { skipSpecialTokens: true }), JSON.stringify(ids)).toBe(
          skipSpecial,
        )
      }
    },
  )

  /**
   * A golden chat as the scorer reads it: its body parsed as a request, the chat template
   * options taken from it with the body's text, so numbers are read as vLLM's Python reads
   * them.
   */
  function renderBody(body: string): ChatPrompt {
    const parsed = parseOpenAiRequest('chat', JSON.parse(body))
    if ('issues' in parsed) throw new Error(`not a chat request: ${parsed.issues.message}`)
    if (parsed.request.kind !== 'chat') throw new Error('not a chat request')
    const { messages } = parsed.request.body
    return tokenizer.applyChatTemplate(messages, requestOptions(parsed.request.body, body))
  }

  it('renders and tokenizes every chat as vLLM does', () => {
    const departures: string[] = []
    for (const chat of goldens.chats) {
      try {
        const prompt = renderBody(chat.body)
        const found = departure(chat, prompt.text, prompt.tokenIds)
        if (found !== undefined) departures.push(found)
      } catch (error) {
        departures.push(`${chat.name}: threw ${error instanceof Error ? error.message : error}`)
      }
    }
    expect(departures, `${departures.length} of ${goldens.chats.length} chats differ`).toEqual([])
  })

  it('reads a tool schema’s floats as Python does only from the body’s text', () => {
    const chat = goldens.chats.find((c) => c.name === 'tool schema with float literals')
    if (chat === undefined) throw new Error('no golden "tool schema with float literals"')
    expect(chat.body).toContain('"maximum":50.0')
    expect(renderBody(chat.body).text).toBe(chat.text)
    // JavaScript's JSON.parse alone has made 50.0 the integer 50: a template that prints
    // it (Qwen3's, Llama 3.1's) prints 50 (gpt-oss prints only the default, -0.0, which
    // JSON.parse keeps a float; Gemma 3's and DeepSeek V3's templates print no tools).
    const parsed = tokenizer.applyChatTemplate(chat.messages, chatTemplateOptions(chat)).text
    expect(parsed === chat.text).toBe(!chat.text.includes('50.0'))
  })

  it('refuses what vLLM answers 400 to', () => {
    const accepted: string[] = []
    for (const golden of goldens.errors) {
      try {
        tokenizer.applyChatTemplate(golden.messages, chatTemplateOptions(golden))
        accepted.push(`${golden.name}: rendered, but vLLM answers 400: ${golden.error}`)
      } catch (error) {
        expect(error, golden.name).toBeInstanceOf(KinfError)
        expect((error as KinfError).code, golden.name).toBe('invalid_request')
        // A template's own raise_exception message reaches the client in vLLM's 400.
        if (golden.errorType === 'TemplateError') {
          expect((error as KinfError).message, golden.name).toContain(golden.error)
        }
      }
    }
    expect(accepted).toEqual([])
  })
})
