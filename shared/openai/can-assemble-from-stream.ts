import type { OpenAiRequest } from './openai-request.ts'

/**
 * Choices one assembled answer may have (n), as createCompletionAssembler caps them: a
 * request for more goes to vLLM as asked, not streamed.
 */
export const maxChoices = 128

/**
 * Request fields, set to anything but null, whose answer vLLM gives only when it does not
 * stream: the prompt's logprobs (a stream refuses them, or drops them at 0), the KV and
 * encoder-cache transfer parameters of disaggregated serving (the non-streamed answer
 * returns the engine's), and stream_options, which vLLM refuses with a 400 unless
 * stream is true (the client must get that 400, not an answer).
 */
const nonStreamedFields = [
  'prompt_logprobs',
  'kv_transfer_params',
  'ec_transfer_params',
  'stream_options',
] as const

/**
 * Request flags that make a stream differ from the full answer: echo (vLLM then computes
 * prompt logprobs a stream cannot carry, and a chat stream echoes list contents unjoined)
 * and beam search (vLLM does not stream it).
 */
const nonStreamedFlags = ['echo', 'use_beam_search'] as const

/**
 * Whether a non-streamed request can be sent upstream as a stream and its chunks
 * assembled (createCompletionAssembler) into the answer vLLM would have given it. When
 * not, the edge sends it as the client did. Unsure cases answer false: the plain call is
 * always faithful.
 */
export function canAssembleFromStream(request: OpenAiRequest): boolean {
  const body = request.body as Record<string, unknown>
  if (body.stream === true) return false
  for (const field of nonStreamedFields) {
    if (body[field] !== undefined && body[field] !== null) return false
  }
  for (const flag of nonStreamedFlags) {
    if (body[flag] !== undefined && body[flag] !== null && body[flag] !== false) return false
  }
  const n = body.n ?? 1
  if (typeof n !== 'number' || n > maxChoices) return false
  // best_of above n: older vLLM releases refuse to stream it (its answer is the best n).
  const bestOf = body.best_of
  return bestOf === undefined || bestOf === null || bestOf === n
}
