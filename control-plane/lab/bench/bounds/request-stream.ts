import type { ChatTurnIds } from '../chat-prompt-ids.ts'
import type { Workload } from '../workload.ts'

/** One request as the bounds see it: its lengths and the keys of its full blocks. */
export interface StreamRequest {
  conversation: number
  turn: number
  promptTokens: number
  outputTokens: number
  /**
   * Keys of the prompt's full blocks, in order. A key names a block and everything
   * before it (vLLM's chained block hash), so equal keys mean equal prefixes.
   */
  promptBlocks: readonly number[]
  /** Keys of the further full blocks the pod computes while answering (prompt + answer). */
  answerBlocks: readonly number[]
}

export interface RequestStream {
  blockSize: number
  /** In arrival order. */
  requests: readonly StreamRequest[]
}

/** The prompt token ids of a chat: `chatPromptIds` with the workload's chat frame bound. */
export type PromptBuilder = (
  prefix: readonly number[] | null,
  turns: readonly ChatTurnIds[],
) => number[]

/**
 * Interns chained blocks: the key of block i is a number standing for (key of block i−1,
 * the block's tokens). Exact, unlike a hash, and the same tokens after the same prefix
 * always give the same key.
 */
export function createBlockKeyer(blockSize: number) {
  const keys = new Map<string, number>()
  return (tokens: readonly number[], fullBlocks: number): number[] => {
    const out: number[] = []
    let parent = -1
    for (let b = 0; b < fullBlocks; b++) {
      const name = `${parent}|${tokens.slice(b * blockSize, (b + 1) * blockSize).join(',')}`
      let key = keys.get(name)
      if (key === undefined) {
        key = keys.size
        keys.set(name, key)
      }
      out.push(key)
      parent = key
    }
    return out
  }
}

/**
 * The first `count` requests of a workload (fewer if a trace runs out), conversation by
 * conversation and turn by turn (the zero-queue floor's order; a trace's is its arrival
 * order), each later turn carrying its history. An answer is
 * `outputTokens` ids, as the DES sends random words of the stable vocabulary; what
 * matters for caching is only that they are the conversation's own, so each conversation
 * gets ids no prompt contains (negative ones). The pod computes KV for the prompt and all
 * but the last generated token, so those full blocks are what a request leaves behind.
 */
export function requestStreamOf(
  workload: Workload,
  buildPrompt: PromptBuilder,
  count: number,
  blockSize = 16,
): RequestStream {
  const keysOf = createBlockKeyer(blockSize)
  const requests: StreamRequest[] = []
  const conversations = workload.size ?? Number.POSITIVE_INFINITY
  for (let c = 0; requests.length < count && c < conversations; c++) {
    const plan = workload.conversation(c)
    const prefix = plan.prefix?.ids ?? null
    const history: ChatTurnIds[] = []
    for (const [turn, planned] of plan.turns.entries()) {
      if (requests.length >= count) break
      const prompt = buildPrompt(prefix, [...history, { userIds: planned.userIds }])
      const answer = new Array<number>(planned.outputTokens).fill(-1 - c)
      const computed = [...prompt, ...answer.slice(0, -1)]
      const keys = keysOf(computed, Math.floor(computed.length / blockSize))
      const promptFull = Math.floor(prompt.length / blockSize)
      requests.push({
        conversation: c,
        turn,
        promptTokens: prompt.length,
        outputTokens: planned.outputTokens,
        promptBlocks: keys.slice(0, promptFull),
        answerBlocks: keys.slice(promptFull),
      })
      history.push({ userIds: planned.userIds, assistantIds: answer })
    }
  }
  return { blockSize, requests }
}
