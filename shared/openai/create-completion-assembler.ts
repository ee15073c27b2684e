import { KinfError, KinfErrorCode } from '../errors/kinf-error.ts'
import { maxChoices } from './can-assemble-from-stream.ts'
import { createChatChoiceBuilder } from './chat-choice-builder.ts'
import { type ChoiceBuilder, isRecord } from './choice-builder.ts'
import { createRunningUsage, type RunningUsage } from './create-running-usage.ts'
import type { OpenAiRequest } from './openai-request.ts'
import { createTextChoiceBuilder } from './text-choice-builder.ts'
import type { Usage } from './usage.ts'

/** What a whole stream, assembled, answers the client who asked for plain JSON. */
export type AssembledAnswer =
  /** The non-streamed answer, and its usage (null when the stream carried none). */
  | { type: 'completion'; body: Record<string, unknown>; usage: Usage | null }
  /** The stream carried an error event: answer with this status and the event's body. */
  | { type: 'upstream_error'; status: number; body: Record<string, unknown> }
  /** The chunks were not a whole answer of vLLM's shape (an upstream_error, 502). */
  | { type: 'malformed'; error: KinfError }

export interface CompletionAssembler {
  /**
   * Takes the parsed JSON of each SSE `data:` event in order (not `[DONE]`). False once the
   * answer is settled as an error: later chunks are ignored.
   */
  add(chunk: unknown): boolean
  /** The answer from the chunks so far; call it when the stream has ended. */
  result(): AssembledAnswer
  /**
   * The tokens used as of the last chunk taken (null before any usage came): what to
   * charge when the stream stops early, the client gone or the upstream cut off.
   */
  usage(): Usage | null
}

/**
 * Top-level fields the non-streamed answer takes from the chunks, the first non-null value
 * each: vLLM repeats id, created and model on every chunk, sends prompt_token_ids and
 * prompt_text (chat) on the first and system_fingerprint and metrics on the last.
 */
const carriedFields = [
  'id',
  'created',
  'model',
  'service_tier',
  'system_fingerprint',
  'prompt_token_ids',
  'prompt_text',
  'metrics',
] as const
type CarriedField = (typeof carriedFields)[number]

interface AssemblerState {
  chunks: number
  carried: Partial<Record<CarriedField, unknown>>
  usage: RunningUsage
  builders: (ChoiceBuilder | undefined)[]
  settled: AssembledAnswer | null
}

/**
 * Assembles the chunks of a streamed generation into the JSON answer vLLM gives the same
 * request unstreamed, so the edge can stream from its upstream (counting tokens as they
 * come, whether or not the client stays) and still answer a client that asked for JSON.
 * Only requests canAssembleFromStream accepts come out field for field. Pure, and linear
 * in the chunks' size: text pieces are joined once, at the end.
 */
export function createCompletionAssembler(request: OpenAiRequest): CompletionAssembler {
  const newBuilder = builderFactory(request)
  const state: AssemblerState = {
    chunks: 0,
    carried: {},
    usage: createRunningUsage(),
    builders: [],
    settled: null,
  }
  return {
    add(chunk) {
      if (state.settled !== null) return false
      state.chunks++
      const problem = addChunk(state, chunk, newBuilder)
      if (problem !== null) state.settled = malformed(`chunk ${state.chunks}: ${problem}`)
      return state.settled === null
    },
    result() {
      return state.settled ?? assemble(state, request.kind)
    },
    usage() {
      const current = state.usage.current()
      return current !== null && 'usage' in current ? current.usage : null
    },
  }
}

function builderFactory(request: OpenAiRequest): (index: number) => ChoiceBuilder {
  if (request.kind === 'completion') return createTextChoiceBuilder
  // vLLM's full answer writes `content or ""` when the tool choice is required or named.
  const toolChoice = request.body.tool_choice
  const contentDefault = toolChoice === 'required' || isRecord(toolChoice) ? '' : null
  return (index) => createChatChoiceBuilder(index, contentDefault)
}

function addChunk(
  state: AssemblerState,
  chunk: unknown,
  newBuilder: (index: number) => ChoiceBuilder,
): string | null {
  if (!isRecord(chunk)) return 'not a JSON object'
  const error = errorEvent(chunk)
  if (error !== null) {
    state.settled = error
    return null
  }
  for (const field of carriedFields) {
    const value = chunk[field]
    if (value !== undefined && value !== null) state.carried[field] ??= value
  }
  const usage = chunk.usage
  if (usage !== undefined && usage !== null && !isRecord(usage)) return 'usage is not an object'
  const choices = chunk.choices ?? []
  if (!Array.isArray(choices)) return 'choices is not an array'
  for (const choice of choices) {
    if (!isRecord(choice)) return 'a choice is not an object'
    const index = choice.index
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= maxChoices) {
      return `a choice's index is not an integer from 0 to ${maxChoices - 1}`
    }
    const builder = state.builders[index] ?? newBuilder(index)
    state.builders[index] = builder
    const problem = builder.add(choice)
    if (problem !== null) return `choice ${index}: ${problem}`
  }
  if (isRecord(usage)) state.usage.take(usage, choices)
  return null
}

/**
 * An error event: `{"error": {message, type, param, code}}`, as vLLM and Kinference's own
 * services end a stream that failed (sse-error-ending.ts), or vLLM's older flat
 * `{"object": "error", message, type, param, code}` (vllm-wire.md §4).
 */
function errorEvent(chunk: Record<string, unknown>): AssembledAnswer | null {
  const error = chunk.error
  if (isRecord(error))
    return { type: 'upstream_error', status: errorStatus(error.code), body: chunk }
  if (chunk.object === 'error')
    return { type: 'upstream_error', status: errorStatus(chunk.code), body: chunk }
  // Any other error value still ends the answer: a failure upstream, said some other way.
  if (error !== undefined && error !== null)
    return { type: 'upstream_error', status: 502, body: chunk }
  return null
}

/**
 * The HTTP status of an error event: vLLM's code is the status itself; Kinference's is one
 * of its error codes, whose status KinfError knows; anything else is a failure upstream.
 */
function errorStatus(code: unknown): number {
  if (typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599) return code
  const known = KinfErrorCode.safeParse(code)
  return known.success ? new KinfError(known.data, '').status : 502
}

function malformed(message: string): AssembledAnswer {
  return {
    type: 'malformed',
    error: new KinfError('upstream_error', `The upstream stream cannot be assembled: ${message}.`),
  }
}

function assemble(state: AssemblerState, kind: OpenAiRequest['kind']): AssembledAnswer {
  if (state.chunks === 0) return malformed('it ended before its first chunk')
  const { id, created, model } = state.carried
  if (typeof id !== 'string') return malformed('no chunk had a string id')
  if (typeof created !== 'number') return malformed('no chunk had a numeric created')
  if (typeof model !== 'string') return malformed('no chunk had a string model')
  if (state.builders.length === 0) return malformed('it carried no choice')
  const choices: Record<string, unknown>[] = []
  for (let index = 0; index < state.builders.length; index++) {
    const built = state.builders[index]?.build() ?? { problem: `choice ${index} never came` }
    if ('problem' in built) return malformed(built.problem)
    choices.push(built.choice)
  }
  const usage = state.usage.current()
  if (usage !== null && 'problem' in usage) return malformed(usage.problem)
  const head = {
    id,
    object: kind === 'chat' ? 'chat.completion' : 'text_completion',
    created,
    model,
  }
  const raw = usage?.raw ?? null
  return {
    type: 'completion',
    body: body(kind, head, choices, state, raw),
    usage: usage?.usage ?? null,
  }
}

/**
 * vLLM's ChatCompletionResponse or CompletionResponse as its non-streamed answer writes
 * it: every field, null where unset. usage is the last one streamed, as streamed (or, for a
 * stream cut before its total, the sum of each choice's last count: create-running-usage.ts).
 */
function body(
  kind: OpenAiRequest['kind'],
  head: Record<string, unknown>,
  choices: Record<string, unknown>[],
  state: AssemblerState,
  usage: Record<string, unknown> | null,
): Record<string, unknown> {
  const carried = (field: CarriedField) => state.carried[field] ?? null
  const common = {
    ...head,
    choices,
    service_tier: carried('service_tier'),
    system_fingerprint: carried('system_fingerprint'),
    usage,
  }
  const transfer = {
    kv_transfer_params: null,
    ec_transfer_params: null,
    metrics: carried('metrics'),
  }
  if (kind === 'completion') return { ...common, ...transfer }
  return {
    ...common,
    prompt_logprobs: null,
    prompt_token_ids: carried('prompt_token_ids'),
    prompt_text: carried('prompt_text'),
    ...transfer,
  }
}
