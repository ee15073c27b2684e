import type { ChatMessage } from '../chat-completion-request.ts'
import { isRecord } from '../choice-builder.ts'
import { createCompletionAssembler } from '../create-completion-assembler.ts'
import type { OpenAiRequest } from '../openai-request.ts'
import {
  type OutputItem,
  type ResponseFrame,
  responseFromChat,
  responseObject,
} from './responses-answer.ts'

/** An item opened while streaming: its id and place, what it has received so far. */
interface OpenItem {
  kind: 'message' | 'function_call'
  id: string
  outputIndex: number
  text: string
}

/** The SSE text of one Responses event (its type as the event name, as OpenAI sends it). */
function sse(event: Record<string, unknown>): string {
  return `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`
}

/**
 * A chat completions stream, chunk by chunk, as the Responses API's events: created and
 * in progress first; an output item (and its content part) opened at its first delta, its
 * text or arguments as deltas; at the end each item done and `response.completed` (or
 * `error` and `response.failed`), the whole response built from the assembled chat answer
 * with the items' ids the stream used.
 */
export class ResponseEventStream {
  private readonly frame: ResponseFrame
  private readonly assembler: ReturnType<typeof createCompletionAssembler>
  private sequence = 0
  private message: OpenItem | null = null
  private readonly calls = new Map<number, OpenItem>()
  private readonly order: OpenItem[] = []

  constructor(frame: ResponseFrame, chatRequest: OpenAiRequest) {
    this.frame = frame
    this.assembler = createCompletionAssembler(chatRequest)
  }

  /** The events that open the stream. */
  start(): string {
    const response = responseObject(this.frame, 'in_progress', [], null, this.frame.request.model)
    return (
      this.emit({ type: 'response.created', response }) +
      this.emit({ type: 'response.in_progress', response })
    )
  }

  /** One parsed chat chunk (a `data:` event that is not [DONE]): the events it makes. */
  chunk(chunk: unknown): string {
    if (!this.assembler.add(chunk)) return ''
    const choice = isRecord(chunk) && Array.isArray(chunk.choices) ? chunk.choices[0] : null
    const delta = isRecord(choice) && isRecord(choice.delta) ? choice.delta : null
    if (delta === null) return ''
    let out = ''
    if (typeof delta.content === 'string' && delta.content !== '') {
      out += this.openMessage()
      const item = this.message as OpenItem
      item.text += delta.content
      out += this.emit({
        type: 'response.output_text.delta',
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        delta: delta.content,
        logprobs: [],
      })
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : [])
      out += this.callDelta(call)
    return out
  }

  /**
   * The stream ended: the closing events, and what to store (null when it failed). The
   * chat answer is assembled from the chunks, so the final response matches what a
   * non-streamed request would have answered.
   */
  end(): { events: string; assistant: ChatMessage | null } {
    const assembled = this.assembler.result()
    if (assembled.type !== 'completion') {
      const error =
        assembled.type === 'malformed' ? { message: assembled.error.message } : assembled.body
      const message = isRecord(error) && isRecord(error.error) ? error.error : error
      const failed = {
        code: 'server_error',
        message: String((message as { message?: unknown }).message ?? 'the upstream failed'),
      }
      const response = {
        ...responseObject(this.frame, 'failed', [], null, this.frame.request.model),
        error: failed,
      }
      return {
        events:
          this.emit({ type: 'error', ...failed, param: null }) +
          this.emit({ type: 'response.failed', response }),
        assistant: null,
      }
    }
    if (this.order.length === 0) this.openMessage()
    const ids = this.order.map((item) => item.id)
    const frame = {
      ...this.frame,
      newItemId: (prefix: string) => ids.shift() ?? this.frame.newItemId(prefix),
    }
    const { response, assistant } = responseFromChat(assembled.body, frame)
    const output = response.output as OutputItem[]
    let events = ''
    for (const [index, item] of output.entries()) events += this.closeItem(item, index)
    return { events: events + this.emit({ type: 'response.completed', response }), assistant }
  }

  private emit(event: Record<string, unknown>): string {
    return sse({ ...event, sequence_number: this.sequence++ })
  }

  private openMessage(): string {
    if (this.message !== null) return ''
    const item: OpenItem = {
      kind: 'message',
      id: this.frame.newItemId('msg'),
      outputIndex: this.order.length,
      text: '',
    }
    this.message = item
    this.order.push(item)
    return (
      this.emit({
        type: 'response.output_item.added',
        output_index: item.outputIndex,
        item: {
          type: 'message',
          id: item.id,
          status: 'in_progress',
          role: 'assistant',
          content: [],
        },
      }) +
      this.emit({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      })
    )
  }

  private callDelta(call: unknown): string {
    if (!isRecord(call)) return ''
    const index = Number(call.index ?? 0)
    const fn = isRecord(call.function) ? call.function : {}
    let out = ''
    let item = this.calls.get(index)
    if (item === undefined) {
      item = {
        kind: 'function_call',
        id: this.frame.newItemId('fc'),
        outputIndex: this.order.length,
        text: '',
      }
      this.calls.set(index, item)
      this.order.push(item)
      out += this.emit({
        type: 'response.output_item.added',
        output_index: item.outputIndex,
        item: {
          type: 'function_call',
          id: item.id,
          call_id: String(call.id ?? ''),
          name: String(fn.name ?? ''),
          arguments: '',
          status: 'in_progress',
        },
      })
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      item.text += fn.arguments
      out += this.emit({
        type: 'response.function_call_arguments.delta',
        item_id: item.id,
        output_index: item.outputIndex,
        delta: fn.arguments,
      })
    }
    return out
  }

  private closeItem(item: OutputItem, index: number): string {
    if (item.type === 'function_call')
      return (
        this.emit({
          type: 'response.function_call_arguments.done',
          item_id: item.id,
          output_index: index,
          arguments: item.arguments,
        }) + this.emit({ type: 'response.output_item.done', output_index: index, item })
      )
    const part = item.content[0]
    return (
      this.emit({
        type: 'response.output_text.done',
        item_id: item.id,
        output_index: index,
        content_index: 0,
        text: part?.text ?? '',
        logprobs: [],
      }) +
      this.emit({
        type: 'response.content_part.done',
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part,
      }) +
      this.emit({ type: 'response.output_item.done', output_index: index, item })
    )
  }
}

/**
 * Splits SSE text into complete events' `data:` payloads, keeping an unfinished event for
 * the next call: `[payloads, rest]`.
 */
export function sseDataEvents(text: string): [string[], string] {
  const normalized = text.replaceAll('\r\n', '\n')
  const events = normalized.split('\n\n')
  const rest = events.pop() ?? ''
  const payloads = events.flatMap((event) => {
    const lines = event.split('\n').filter((line) => line.startsWith('data:'))
    return lines.length === 0 ? [] : [lines.map((line) => line.slice(5).trimStart()).join('\n')]
  })
  return [payloads, rest]
}
