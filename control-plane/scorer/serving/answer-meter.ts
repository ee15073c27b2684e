import {
  reportedCachedTokens,
  type Usage,
  usageOf,
  usageOfJson,
} from '../../../shared/openai/usage.ts'
import { countTokenEvents, usageFromStream } from './count-token-events.ts'

/** What a pod's answer said of itself, once it ended. */
export interface MeteredAnswer {
  /** Usage seen: cachedTokens null when absent (the caller decides what absence means). */
  usageSeen: boolean
  cachedTokens: number | null
  /** The pod's usage.prompt_tokens; null when it did not say. */
  promptTokens: number | null
  generatedTokens: number
}

/** What a pod answers: generated tokens (chat, completions), or vectors (/v1/embeddings). */
export type AnswerKind = 'generation' | 'embeddings'

const maxBufferedBody = 4 * 1024 * 1024
const tailBytes = 4096

/**
 * Watches a pod's answer go by, whoever carries it (the scorer's proxy, or a gateway that
 * tells the Endpoint Picker what passed): a stream's first token and its token events as
 * they come, keeping its tail for the usage event vLLM sends last; a JSON answer whole (up
 * to 4 MiB) for its usage block; an embeddings answer's tail, since its vectors (2,048
 * inputs of thousands of floats) may run far past that, and its usage comes last.
 */
export class AnswerMeter {
  private readonly kept: Buffer[] = []
  private keptSize = 0
  private seenBytes = false
  private generated = 0
  private readonly stream: boolean
  private readonly kind: AnswerKind

  constructor(stream: boolean, kind: AnswerKind = 'generation') {
    this.stream = stream
    this.kind = kind
  }

  /** Tokens generated so far (a stream's token events). */
  get generatedTokens(): number {
    return this.generated
  }

  /** A chunk of the answer; true when it is the first one. */
  add(chunk: Buffer): boolean {
    const first = !this.seenBytes
    if (chunk.length > 0) this.seenBytes = true
    if (this.stream || this.kind === 'embeddings') {
      if (this.stream) this.generated += countTokenEvents(chunk)
      this.kept.push(chunk)
      this.keptSize += chunk.length
      while (this.kept.length > 1 && this.keptSize - (this.kept[0] as Buffer).length >= tailBytes)
        this.keptSize -= (this.kept.shift() as Buffer).length
    } else if (this.keptSize < maxBufferedBody) {
      this.kept.push(chunk)
      this.keptSize += chunk.length
    }
    return first && chunk.length > 0
  }

  /** The answer's usage, read from what was kept, once it has ended. */
  ended(): MeteredAnswer {
    const all = Buffer.concat(this.kept).toString('utf8')
    const usage = this.stream
      ? usageFromStream(all.slice(-tailBytes))
      : this.kind === 'embeddings'
        ? usageOfTail(all.slice(-tailBytes))
        : usageOfJson(all)
    // An embeddings answer generates nothing: its usage is seen once it counts the prompt
    // (vLLM's may leave completion_tokens out), and it generated 0 tokens.
    const counted = this.kind === 'embeddings' ? usage?.prompt_tokens : usage?.completion_tokens
    return {
      usageSeen: counted !== undefined,
      cachedTokens: usage ? reportedCachedTokens(usage) : null,
      promptTokens: usage?.prompt_tokens ?? null,
      generatedTokens:
        this.kind === 'embeddings' ? 0 : (usage?.completion_tokens ?? this.generated),
    }
  }
}

/**
 * The usage object at the end of a JSON answer's tail (vLLM's EmbeddingResponse puts it
 * after the vectors): parsed from `"usage":` to one of the closing braces after it.
 */
function usageOfTail(tail: string): Usage | null {
  const at = tail.lastIndexOf('"usage"')
  if (at < 0) return null
  const start = tail.indexOf('{', at)
  if (start < 0) return null
  for (let end = tail.lastIndexOf('}'); end > start; end = tail.lastIndexOf('}', end - 1)) {
    try {
      return usageOf({ usage: JSON.parse(tail.slice(start, end + 1)) })
    } catch {
      // The braces past the usage object close the answer: one fewer.
    }
  }
  return null
}
