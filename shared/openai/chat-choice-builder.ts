import {
  appendArray,
  type ChoiceBuilder,
  type ChoiceEnd,
  isRecord,
  readEnd,
  textPiece,
} from './choice-builder.ts'

/** Tool calls one choice may carry; a stream naming a later index is malformed. */
export const maxToolCalls = 128

/** The names vLLM has given the reasoning text: `reasoning_content`, then `reasoning`. */
const reasoningKeys = ['reasoning', 'reasoning_content'] as const
type ReasoningKey = (typeof reasoningKeys)[number]

interface ToolCallParts {
  id: string | null
  type: string | null
  name: string | null
  args: string[]
}

interface ChatChoiceState extends ChoiceEnd {
  role: string | null
  content: string[]
  sawContent: boolean
  refusal: string[] | null
  reasoning: Map<ReasoningKey, string[]>
  toolCalls: (ToolCallParts | undefined)[]
  logprobs: unknown[] | null
  tokenIds: unknown[] | null
}

/**
 * Gathers the streamed deltas of one chat choice into the choice vLLM's non-streamed answer
 * has. `contentDefault` is the content when no delta carried any: null, or "" where vLLM's
 * full answer writes `content or ""` (tool_choice "required" or a named function).
 */
export function createChatChoiceBuilder(index: number, contentDefault: '' | null): ChoiceBuilder {
  const state: ChatChoiceState = {
    role: null,
    content: [],
    sawContent: false,
    refusal: null,
    reasoning: new Map(),
    toolCalls: [],
    logprobs: null,
    tokenIds: null,
    finishReason: null,
    stopReason: null,
  }
  return {
    add(choice) {
      const delta = choice.delta
      if (!isRecord(delta)) return 'delta is not an object'
      return (
        addDelta(state, delta) ??
        addLogprobs(state, choice.logprobs) ??
        addTokenIds(state, choice.token_ids) ??
        readEnd(state, choice)
      )
    },
    build() {
      if (state.role === null) return { problem: `choice ${index} came without a role` }
      if (state.finishReason === null) return { problem: `choice ${index} did not finish` }
      const toolCalls = buildToolCalls(state.toolCalls)
      if ('problem' in toolCalls) return { problem: `choice ${index}: ${toolCalls.problem}` }
      return {
        choice: {
          index,
          message: message(state, contentDefault, toolCalls.calls),
          logprobs: state.logprobs === null ? null : { content: state.logprobs },
          finish_reason: state.finishReason,
          stop_reason: state.stopReason,
          token_ids: state.tokenIds,
          // Only a non-streamed answer can carry it (vLLM streams none); null unless the
          // server runs with routed experts returned.
          routed_experts: null,
        },
      }
    },
  }
}

function addDelta(state: ChatChoiceState, delta: Record<string, unknown>): string | null {
  const role = textPiece(delta.role, 'delta.role')
  if ('problem' in role) return role.problem
  if (role.piece !== null) state.role ??= role.piece
  const content = textPiece(delta.content, 'delta.content')
  if ('problem' in content) return content.problem
  if (content.piece !== null) {
    state.content.push(content.piece)
    // vLLM opens each choice with {role, content: ""}: that alone says nothing of the
    // content, which its full answer leaves null when a parser took all the text.
    if (content.piece !== '' || role.piece === null) state.sawContent = true
  }
  const refusal = textPiece(delta.refusal, 'delta.refusal')
  if ('problem' in refusal) return refusal.problem
  if (refusal.piece !== null) {
    state.refusal ??= []
    state.refusal.push(refusal.piece)
  }
  for (const key of reasoningKeys) {
    const reasoning = textPiece(delta[key], `delta.${key}`)
    if ('problem' in reasoning) return reasoning.problem
    if (reasoning.piece === null) continue
    const parts = state.reasoning.get(key)
    if (parts) parts.push(reasoning.piece)
    else state.reasoning.set(key, [reasoning.piece])
  }
  return addToolCalls(state, delta.tool_calls)
}

function addToolCalls(state: ChatChoiceState, value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (!Array.isArray(value)) return 'delta.tool_calls is not an array'
  for (const call of value) {
    if (!isRecord(call)) return 'a tool call is not an object'
    const at = call.index
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at >= maxToolCalls) {
      return `a tool call's index is not an integer from 0 to ${maxToolCalls - 1}`
    }
    const parts = state.toolCalls[at] ?? { id: null, type: null, name: null, args: [] }
    state.toolCalls[at] = parts
    const problem = addToolCallDelta(parts, call)
    if (problem !== null) return `tool call ${at}: ${problem}`
  }
  return null
}

/**
 * vLLM's tool parsers send a call's id, type and name once, in its first delta, and the
 * arguments in pieces after it: the first id, type and name are kept, arguments appended.
 */
function addToolCallDelta(parts: ToolCallParts, call: Record<string, unknown>): string | null {
  const id = textPiece(call.id, 'id')
  if ('problem' in id) return id.problem
  if (id.piece) parts.id ??= id.piece
  const type = textPiece(call.type, 'type')
  if ('problem' in type) return type.problem
  if (type.piece) parts.type ??= type.piece
  const fn = call.function
  if (fn === undefined || fn === null) return null
  if (!isRecord(fn)) return 'function is not an object'
  const name = textPiece(fn.name, 'function.name')
  if ('problem' in name) return name.problem
  if (name.piece) parts.name ??= name.piece
  const args = textPiece(fn.arguments, 'function.arguments')
  if ('problem' in args) return args.problem
  if (args.piece !== null) parts.args.push(args.piece)
  return null
}

function addLogprobs(state: ChatChoiceState, value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (!isRecord(value)) return 'logprobs is not an object'
  const appended = appendArray(state.logprobs ?? [], value.content, 'logprobs.content')
  if ('problem' in appended) return appended.problem
  state.logprobs = appended.parts
  return null
}

function addTokenIds(state: ChatChoiceState, value: unknown): string | null {
  const appended = appendArray(state.tokenIds, value, 'token_ids')
  if ('problem' in appended) return appended.problem
  state.tokenIds = appended.parts
  return null
}

/** The calls in index order, as vLLM's ToolCall: id, type, function (no index). */
function buildToolCalls(
  parts: readonly (ToolCallParts | undefined)[],
): { calls: object[] } | { problem: string } {
  const calls: object[] = []
  for (let at = 0; at < parts.length; at++) {
    const call = parts[at]
    if (call === undefined) return { problem: `tool call ${at} never came` }
    if (call.id === null) return { problem: `tool call ${at} came without an id` }
    if (call.name === null) return { problem: `tool call ${at} came without a function name` }
    calls.push({
      id: call.id,
      type: call.type ?? 'function',
      function: { name: call.name, arguments: call.args.join('') },
    })
  }
  return { calls }
}

/**
 * vLLM's ChatMessage as its non-streamed answer writes it: every field, null where unset,
 * tool_calls only when there are some, the reasoning under the name the stream used
 * (`reasoning`, the current name, when there was none).
 */
function message(
  state: ChatChoiceState,
  contentDefault: '' | null,
  toolCalls: object[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    role: state.role,
    content: state.sawContent ? state.content.join('') : contentDefault,
    refusal: state.refusal === null ? null : state.refusal.join(''),
    annotations: null,
    audio: null,
    function_call: null,
  }
  if (toolCalls.length > 0) out.tool_calls = toolCalls
  if (state.reasoning.size === 0) out.reasoning = null
  for (const [key, parts] of state.reasoning) out[key] = parts.join('')
  return out
}
