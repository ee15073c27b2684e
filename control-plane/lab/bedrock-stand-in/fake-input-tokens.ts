import type {
  ConverseContentBlock,
  ConverseRequest,
  JsonValue,
} from '../../../shared/bedrock/converse-request.ts'

/** What a request gives the model to read: CountTokens' `converse` input carries these too. */
export type FakeTokensInput = Pick<ConverseRequest, 'messages' | 'system' | 'toolConfig'>

export interface FakeInputTokens {
  /** Every input token, cached or not: what CountTokens answers for the request. */
  total: number
  /** Of `total`, the system text before the last cachePoint (cacheable), and that text. */
  cacheable: number
  cacheablePrefix: string
}

/** One token per whitespace-separated word: deterministic and easy to check by hand. */
export function fakeTokens(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length
}

/**
 * JSON (tool inputs, JSON tool results, tool schemas) laid out one member per line, so each
 * key, value and bracket is a word: a schema of thirty properties is not one token.
 */
function jsonTokens(value: JsonValue): number {
  return fakeTokens(JSON.stringify(value, null, 1))
}

/** The words of a content block; an image or a cache point has none. */
function blockTokens(block: ConverseContentBlock): number {
  if ('text' in block) return fakeTokens(block.text)
  if ('toolUse' in block) return fakeTokens(block.toolUse.name) + jsonTokens(block.toolUse.input)
  if ('toolResult' in block) {
    return block.toolResult.content.reduce(
      (sum, c) => sum + ('text' in c ? fakeTokens(c.text) : jsonTokens(c.json)),
      0,
    )
  }
  return 0
}

/**
 * The fake model's input tokens for a request, the one rule behind both Converse's usage
 * and CountTokens: every text the request carries (system, every message's text, tool
 * calls and tool results, each tool's name, description and schema), one token a word.
 */
export function fakeInputTokens(request: FakeTokensInput): FakeInputTokens {
  let total = 0
  let cacheable = 0
  let cacheablePrefix = ''
  let prefix = ''
  for (const block of request.system ?? []) {
    if ('text' in block) {
      prefix += `${block.text}\n`
      total += fakeTokens(block.text)
    } else {
      cacheable = total
      cacheablePrefix = prefix
    }
  }
  for (const message of request.messages) {
    for (const block of message.content) total += blockTokens(block)
  }
  for (const { toolSpec } of request.toolConfig?.tools ?? []) {
    total +=
      fakeTokens(toolSpec.name) +
      fakeTokens(toolSpec.description ?? '') +
      jsonTokens(toolSpec.inputSchema.json)
  }
  return { total, cacheable, cacheablePrefix }
}
