import type {
  ConverseContentBlock,
  ConverseRequest,
  JsonValue,
} from '../../shared/bedrock/converse-request.ts'
import type { ConverseUsage } from '../../shared/bedrock/converse-response.ts'

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

/** One token per whitespace-separated word: deterministic and easy to check by hand. */
function tokens(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length
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

/**
 * What the fake model answers, from the request alone:
 * - text: "Echo:" and the first 16 words of the last user message (a tool result's text
 *   when that message carries one);
 * - a tool call when the request has tools and either toolChoice is `any`/`tool`, or the
 *   last user message contains the word "tool" or a tool's name: it calls the named tool
 *   (else the first) with an input built from the tool's JSON schema properties;
 * - stopSequences cut the text before the first match (stop_sequence), maxTokens cuts it
 *   to that many words (max_tokens);
 * - usage: one token per word; system text before a cachePoint is written to the cache the
 *   first time this server sees it (cacheWriteInputTokens) and read afterwards.
 */
export function planFakeReply(
  request: ConverseRequest,
  requestNumber: number,
  cachedPrefixes: Set<string>,
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
  let text = `Echo: ${promptWords.slice(0, maxEchoWords).join(' ') || '(empty)'}`
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

  let cachedTokens = 0
  let uncachedSystem = 0
  let prefix = ''
  let cachedPrefix = ''
  for (const block of request.system ?? []) {
    if ('text' in block) {
      prefix += `${block.text}\n`
      uncachedSystem += tokens(block.text)
    } else {
      cachedTokens += uncachedSystem
      uncachedSystem = 0
      cachedPrefix = prefix
    }
  }
  const messageTokens = request.messages.reduce(
    (sum, m) => sum + m.content.reduce((s, b) => s + tokens(blockText(b)), 0),
    0,
  )
  const outputTokens = words.length + (stopReason === 'tool_use' ? 1 : 0)
  const inputTokens = uncachedSystem + messageTokens
  const usage: ConverseUsage = {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
  }
  if (cachedTokens > 0) {
    if (cachedPrefixes.has(cachedPrefix)) usage.cacheReadInputTokens = cachedTokens
    else {
      cachedPrefixes.add(cachedPrefix)
      usage.cacheWriteInputTokens = cachedTokens
    }
    usage.totalTokens = inputTokens + cachedTokens + outputTokens
  }
  return { blocks, stopReason, usage }
}
