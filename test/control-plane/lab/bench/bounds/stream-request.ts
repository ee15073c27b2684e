import type {
  RequestStream,
  StreamRequest,
} from '../../../../../control-plane/lab/bench/bounds/request-stream.ts'

/** A request of `tokens` prompt tokens whose full blocks have the given keys. */
export const request = (
  promptBlocks: number[],
  tokens = promptBlocks.length * 16 + 1,
  answerBlocks: number[] = [],
): StreamRequest => ({
  conversation: 0,
  turn: 0,
  promptTokens: tokens,
  outputTokens: 1,
  promptBlocks,
  answerBlocks,
})

/** A stream of 16-token blocks. */
export const stream = (...requests: StreamRequest[]): RequestStream => ({ blockSize: 16, requests })
