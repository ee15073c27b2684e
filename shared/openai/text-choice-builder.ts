import {
  appendArray,
  type ChoiceBuilder,
  type ChoiceEnd,
  isRecord,
  readEnd,
  textPiece,
} from './choice-builder.ts'

/** The four parallel lists of a completions choice's logprobs, in vLLM's field order. */
const logprobLists = ['text_offset', 'token_logprobs', 'tokens', 'top_logprobs'] as const
type LogprobList = (typeof logprobLists)[number]

interface TextChoiceState extends ChoiceEnd {
  text: string[]
  logprobs: Record<LogprobList, unknown[]> | null
  tokenIds: unknown[] | null
  promptTokenIds: unknown[] | null
}

/**
 * Gathers the streamed pieces of one /v1/completions choice into the choice vLLM's
 * non-streamed answer has. Each chunk's logprobs cover its own tokens, and vLLM starts a
 * chunk's text_offset where the text so far ends, so the lists append as they come.
 */
export function createTextChoiceBuilder(index: number): ChoiceBuilder {
  const state: TextChoiceState = {
    text: [],
    logprobs: null,
    tokenIds: null,
    promptTokenIds: null,
    finishReason: null,
    stopReason: null,
  }
  return {
    add(choice) {
      const text = textPiece(choice.text, 'text')
      if ('problem' in text) return text.problem
      if (text.piece === null) return 'text is missing'
      state.text.push(text.piece)
      return (
        addLogprobs(state, choice.logprobs) ?? addTokenIds(state, choice) ?? readEnd(state, choice)
      )
    },
    build() {
      if (state.finishReason === null) return { problem: `choice ${index} did not finish` }
      return {
        choice: {
          index,
          text: state.text.join(''),
          logprobs: state.logprobs,
          finish_reason: state.finishReason,
          stop_reason: state.stopReason,
          token_ids: state.tokenIds,
          // Streams never carry prompt logprobs (canAssembleFromStream keeps such requests
          // off this path) nor routed experts (null unless the server returns them).
          prompt_logprobs: null,
          prompt_token_ids: state.promptTokenIds,
          routed_experts: null,
        },
      }
    },
  }
}

function addLogprobs(state: TextChoiceState, value: unknown): string | null {
  if (value === undefined || value === null) return null
  if (!isRecord(value)) return 'logprobs is not an object'
  const lists = state.logprobs ?? {
    text_offset: [],
    token_logprobs: [],
    tokens: [],
    top_logprobs: [],
  }
  state.logprobs = lists
  for (const key of logprobLists) {
    const appended = appendArray(lists[key], value[key], `logprobs.${key}`)
    if ('problem' in appended) return appended.problem
  }
  return null
}

/** token_ids come a chunk's worth at a time; prompt_token_ids once, on the first chunk. */
function addTokenIds(state: TextChoiceState, choice: Record<string, unknown>): string | null {
  const appended = appendArray(state.tokenIds, choice.token_ids, 'token_ids')
  if ('problem' in appended) return appended.problem
  state.tokenIds = appended.parts
  const prompt = choice.prompt_token_ids
  if (prompt === undefined || prompt === null || state.promptTokenIds !== null) return null
  if (!Array.isArray(prompt)) return 'prompt_token_ids is not an array'
  state.promptTokenIds = prompt
  return null
}
