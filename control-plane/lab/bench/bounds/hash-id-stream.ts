import { type MooncakeRequest, mooncakeBlockTokens } from '../trace/parse-mooncake-trace.ts'
import type { RequestStream } from './request-stream.ts'

/**
 * A Mooncake trace as a stream of its own 512-token hash-id blocks, in trace order: the
 * trace's terms, in which published trace ceilings are quoted (a hash id already
 * names its block and every block before it). Only full blocks are kept.
 */
export function hashIdStreamOf(trace: readonly MooncakeRequest[]): RequestStream {
  return {
    blockSize: mooncakeBlockTokens,
    requests: trace.map((r, i) => ({
      conversation: i,
      turn: 0,
      promptTokens: r.input_length,
      outputTokens: r.output_length,
      promptBlocks: r.hash_ids.slice(0, Math.floor(r.input_length / mooncakeBlockTokens)),
      answerBlocks: [],
    })),
  }
}
