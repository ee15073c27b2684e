import type {
  ConverseContentBlock,
  ConverseRequest,
  JsonValue,
} from '../../../shared/bedrock/converse-request.ts'
import type { ConverseUsage } from '../../../shared/bedrock/converse-response.ts'
import { fakeInputTokens } from './fake-input-tokens.ts'

/** Words echoed back at most: answers stay short whatever the prompt. */
const maxEchoWords = 16

export type FakeReplyBlock =
  | { kind: 'text'; words: string[] }
  | { kind: 'toolUse'; toolUseId: string; name: string; input: Record<string, JsonValue> }

export interface FakeReply {
  blocks: FakeReplyBlock[]
  stopReason: string
  usage: ConverseUsage
}

function blockText(block: ConverseContentBlock): string {
  if ('text' in block) return block.text
  if ('toolResult' in block) {
    return block.toolResult.content
      .map((c) => ('text' in c ? c.text : JSON.stringify(c.json)))
      .join(' ')
  }
  if ('toolUse' in block) return JSON.stringify(block.toolUse.input)
  return ''
}

/** A value of the JSON schema's type, so a tool call's input matches its schema's properties. */
function sampleOf(schema: unknown, name: string, prompt: string): JsonValue {
  const type =
    typeof schema === 'object' && schema !== null ? (schema as { type?: unknown }).type : undefined
  if (type === 'number' || type === 'integer') return 42
  if (type === 'boolean') return true
  if (type === 'array') return []
  if (type === 'object') return {}
  return name === 'query' || name === 'q' ? prompt : `${name}-value`
}

function toolInput(schema: JsonValue, prompt: string): Record<string, JsonValue> {
  const properties =
    typeof schema === 'object' && schema !== null && !Array.isArray(schema)
      ? schema.properties
      : undefined
  const input: Record<string, JsonValue> = {}
  if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      input[name] = sampleOf(property, name, prompt)
    }
  }
  return input
}

/** "Echo:" and the prompt's words over and over, `length` words in all. */
function longAnswer(promptWords: readonly string[], length: number): string {
  const filler = promptWords.length > 0 ? promptWords : ['(empty)']
  const words = ['Echo:']
  for (let i = 0; words.length < length; i++) words.push(filler[i % filler.length] ?? '')
  return words.slice(0, length).join(' ')
}

/**
 * What the fake model answers, from the request alone:
 * - text: "Echo:" and the first 16 words of the last user message (a tool result's text
 *   when that message carries one); with `answerWords` (the `words:N` fault), exactly that
 *   many words: "Echo:" and the message's words over and over;
 * - a tool call when the request has tools and either toolChoice is `any`/`tool`, or the
 *   last user message contains the word "tool" or a tool's name: it calls the named tool
 *   (else the first) with an input built from the tool's JSON schema properties;
 * - stopSequences cut the text before the first match (stop_sequence), maxTokens cuts it
 *   to that many words (max_tokens);
 * - usage: one token per word, in as fakeInputTokens counts (CountTokens' rule), out one a
 *   word and one for a tool call; system text before a cachePoint is written to the cache
 *   the first time this server sees it (cacheWriteInputTokens) and read afterwards.
 */
export function planFakeReply(
  request: ConverseRequest,
  requestNumber: number,
  cachedPrefixes: Set<string>,
  answerWords?: number,
): FakeReply {
  const last = request.messages.at(-1)
  const prompt = (last?.role === 'user' ? last.content.map(blockText).join(' ') : '').trim()
  const promptWords = prompt.split(/\s+/).filter((w) => w !== '')
  const blocks: FakeReplyBlock[] = []
  let stopReason = 'end_turn'

  const tools = request.toolConfig?.tools ?? []
  const choice = request.toolConfig?.toolChoice
  const named = tools.find((t) =>
    promptWords.some((w) => w.replace(/\W+$/, '') === t.toolSpec.name),
  )
  const forced =
    choice && 'tool' in choice ? tools.find((t) => t.toolSpec.name === choice.tool.name) : undefined
  const wantsTool =
    tools.length > 0 &&
    !(last?.content.some((b) => 'toolResult' in b) ?? false) &&
    (forced !== undefined ||
      (choice !== undefined && 'any' in choice) ||
      named !== undefined ||
      /\btools?\b/i.test(prompt))
  let text =
    answerWords === undefined
      ? `Echo: ${promptWords.slice(0, maxEchoWords).join(' ') || '(empty)'}`
      : longAnswer(promptWords, answerWords)
  const tool = forced ?? named ?? tools[0]
  if (wantsTool && tool) {
    text = `Calling ${tool.toolSpec.name}.`
    stopReason = 'tool_use'
  }

  for (const stop of request.inferenceConfig?.stopSequences ?? []) {
    const at = text.indexOf(stop)
    if (at >= 0) {
      text = text.slice(0, at)
      stopReason = 'stop_sequence'
    }
  }
  let words = text.split(' ').filter((w) => w !== '')
  const maxTokens = request.inferenceConfig?.maxTokens
  if (maxTokens !== undefined && words.length > maxTokens) {
    words = words.slice(0, maxTokens)
    stopReason = 'max_tokens'
  }
  if (words.length > 0) blocks.push({ kind: 'text', words })
  if (stopReason === 'tool_use' && tool) {
    blocks.push({
      kind: 'toolUse',
      toolUseId: `tooluse_fake${requestNumber}`,
      name: tool.toolSpec.name,
      input: toolInput(tool.toolSpec.inputSchema.json, prompt),
    })
  }

  const input = fakeInputTokens(request)
  const outputTokens = words.length + (stopReason === 'tool_use' ? 1 : 0)
  const inputTokens = input.total - input.cacheable
  const usage: ConverseUsage = {
    inputTokens,
    outputTokens,
    totalTokens: input.total + outputTokens,
  }
  if (input.cacheable > 0) {
    if (cachedPrefixes.has(input.cacheablePrefix)) usage.cacheReadInputTokens = input.cacheable
    else {
      cachedPrefixes.add(input.cacheablePrefix)
      usage.cacheWriteInputTokens = input.cacheable
    }
  }
  return { blocks, stopReason, usage }
}

/** Count `tokens` of the input as cached (as Bedrock does, they leave inputTokens). */
export function moveToCache(
  usage: ConverseUsage,
  tokens: number | undefined,
  field: 'cacheReadInputTokens' | 'cacheWriteInputTokens',
): void {
  if (tokens === undefined) return
  const moved = Math.min(tokens, usage.inputTokens)
  usage.inputTokens -= moved
  usage[field] = (usage[field] ?? 0) + moved
}
