import { KinfError } from '../errors/kinf-error.ts'
import type { ChatCompletionChunk } from './chat-completion.ts'
import type { ConverseStreamEvent } from './converse-stream-event.ts'
import { type ChatReplyIdentity, chatUsageOf, finishReasonOf } from './to-chat-completion.ts'

export interface ConverseStreamTranslatorOptions extends ChatReplyIdentity {
  /** stream_options.include_usage: a last chunk with `choices: []` and the usage. */
  includeUsage: boolean
}

type ChunkChoice = ChatCompletionChunk['choices'][number]

/**
 * Turns Converse stream events into OpenAI chat.completion.chunk objects in Envoy's order:
 * the role chunk; text (and reasoning) deltas; a tool call's start (`index` counts tool
 * calls, not content blocks) then its argument fragments; the finish chunk at messageStop;
 * the usage chunk at metadata (which Bedrock sends after messageStop), only when asked.
 * The caller writes `data: [DONE]` after the stream ends.
 */
export class ConverseStreamTranslator {
  readonly #options: ConverseStreamTranslatorOptions
  #roleSent = false
  /** contentBlockIndex -> tool call index, for the blocks that are tool calls. */
  readonly #toolIndexByBlock = new Map<number, number>()
  #stopReason: string | undefined

  constructor(options: ConverseStreamTranslatorOptions) {
    this.#options = options
  }

  /** The stopReason of messageStop, once it came (for logging malformed stops). */
  get stopReason(): string | undefined {
    return this.#stopReason
  }

  /** The chunks one event turns into (often none, never more than two). */
  translate(event: ConverseStreamEvent): ChatCompletionChunk[] {
    const chunks: ChatCompletionChunk[] = []
    const choice = (delta: ChunkChoice['delta'], finishReason: ChunkChoice['finish_reason']) => {
      // A stream that skips messageStart still opens with the role, as clients expect.
      if (!this.#roleSent) {
        this.#roleSent = true
        if (!('role' in delta)) chunks.push(this.#chunk({ role: 'assistant', content: '' }, null))
      }
      chunks.push(this.#chunk(delta, finishReason))
    }
    if (event.messageStart) {
      if (!this.#roleSent) choice({ role: 'assistant', content: '' }, null)
    }
    const start = event.contentBlockStart
    if (start?.start?.toolUse) {
      const index = this.#toolIndexByBlock.size
      this.#toolIndexByBlock.set(start.contentBlockIndex, index)
      const { toolUseId, name } = start.start.toolUse
      choice(
        {
          tool_calls: [
            { index, id: toolUseId, type: 'function', function: { name, arguments: '' } },
          ],
        },
        null,
      )
    }
    const delta = event.contentBlockDelta
    if (delta) {
      if (delta.delta.text !== undefined) choice({ content: delta.delta.text }, null)
      const reasoning = delta.delta.reasoningContent?.text
      if (reasoning !== undefined) choice({ reasoning_content: reasoning }, null)
      if (delta.delta.toolUse) {
        const index = this.#toolIndexByBlock.get(delta.contentBlockIndex)
        if (index === undefined) {
          throw new KinfError(
            'upstream_error',
            `Bedrock sent tool input for content block ${delta.contentBlockIndex} before its start`,
          )
        }
        choice(
          { tool_calls: [{ index, function: { arguments: delta.delta.toolUse.input } }] },
          null,
        )
      }
    }
    if (event.messageStop) {
      this.#stopReason = event.messageStop.stopReason
      choice({}, finishReasonOf(event.messageStop.stopReason))
    }
    if (event.metadata && this.#options.includeUsage) {
      chunks.push({
        ...this.#chunk({}, null),
        choices: [],
        usage: chatUsageOf(event.metadata.usage),
      })
    }
    return chunks
  }

  #chunk(delta: ChunkChoice['delta'], finishReason: ChunkChoice['finish_reason']) {
    const { id, model, created, includeUsage } = this.#options
    const chunk: ChatCompletionChunk = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    }
    if (includeUsage) chunk.usage = null
    return chunk
  }
}
