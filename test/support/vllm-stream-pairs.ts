import { vllmChatStreamPairs } from './vllm-chat-stream-pairs.ts'

/**
 * Pairs of what vLLM sends for one generation streamed (the parsed `data:` events, before
 * `[DONE]`) and unstreamed (the JSON body), written out field by field from vLLM's
 * serving code: a stream chunk is its pydantic model dumped with exclude_unset (fields
 * passed explicitly stay, even as null; the final usage chunk also drops nulls), a full
 * answer is model_dump() (every field, null where unset), ChatMessage drops an empty
 * tool_calls. Ids, `created` and tool call ids differ between the two, as two calls give.
 * Every stream asks `stream_options: {include_usage: true, continuous_usage_stats: true}`.
 */
export interface VllmStreamPair {
  name: string
  kind: 'chat' | 'completion'
  /** The request, without stream and stream_options. */
  request: Record<string, unknown>
  chunks: Record<string, unknown>[]
  /** The non-streamed answer, or the error vLLM answers unstreamed with its status. */
  full: { status: number; body: Record<string, unknown> }
}

const model = 'qwen3.8-27b-fp8'
const textHead = { object: 'text_completion', created: 1789095808, model }
const textFull = { object: 'text_completion', created: 1789095811, model }
const textTail = { kv_transfer_params: null, ec_transfer_params: null, metrics: null }

/** A completions chunk: every choice field passed, so every one is sent. */
function textChunk(
  id: string,
  choice: { index: number; text: string; logprobs?: object; finish?: string; stop?: number },
  usage: object,
  ids: { prompt?: number[]; tokens?: number[] } = {},
) {
  return {
    id,
    ...textHead,
    choices: [
      {
        index: choice.index,
        text: choice.text,
        logprobs: choice.logprobs ?? null,
        finish_reason: choice.finish ?? null,
        stop_reason: choice.stop ?? null,
        prompt_token_ids: ids.prompt ?? null,
        token_ids: ids.tokens ?? null,
      },
    ],
    usage,
  }
}

const counts = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  total_tokens: prompt + completion,
  completion_tokens: completion,
})
/** The final usage chunk of /v1/completions: exclude_none, the default object kept. */
const textUsage = (id: string, prompt: number, completion: number) => ({
  id,
  ...textHead,
  choices: [],
  usage: counts(prompt, completion),
})
const fullUsage = (prompt: number, completion: number) => ({
  ...counts(prompt, completion),
  prompt_tokens_details: null,
  completion_tokens_details: null,
})

/** logprobs=1: the sampled token and the top one, text_offset where the text so far ends. */
const paris = { text_offset: [0], token_logprobs: [-0.02], tokens: [' Paris'] }
const parisTop = [{ ' Paris': -0.02, ' Lyon': -4.1 }]
const stopToken = { text_offset: [6], token_logprobs: [-0.3], tokens: ['.'] }
const stopTop = [{ '.': -0.3, ',': -1.9 }]
const logprobs: VllmStreamPair = {
  name: 'completions: logprobs over two chunks, ended by a stop token id',
  kind: 'completion',
  request: { model, prompt: 'The capital of France is', logprobs: 1, stop_token_ids: [13] },
  chunks: [
    textChunk(
      'cmpl-3c2f',
      { index: 0, text: ' Paris', logprobs: { ...paris, top_logprobs: parisTop } },
      counts(5, 1),
    ),
    textChunk(
      'cmpl-3c2f',
      {
        index: 0,
        text: '',
        logprobs: { ...stopToken, top_logprobs: stopTop },
        finish: 'stop',
        stop: 13,
      },
      counts(5, 2),
    ),
    textUsage('cmpl-3c2f', 5, 2),
  ],
  full: {
    status: 200,
    body: {
      id: 'cmpl-88d0',
      ...textFull,
      choices: [
        {
          index: 0,
          text: ' Paris',
          logprobs: {
            text_offset: [0, 6],
            token_logprobs: [-0.02, -0.3],
            tokens: [' Paris', '.'],
            top_logprobs: [...parisTop, ...stopTop],
          },
          finish_reason: 'stop',
          stop_reason: 13,
          token_ids: null,
          prompt_logprobs: null,
          prompt_token_ids: null,
          routed_experts: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: fullUsage(5, 2),
      ...textTail,
    },
  },
}

const prompt = [785, 6722, 315]
const tokenIds: VllmStreamPair = {
  name: 'completions: n = 2 interleaved, return_token_ids',
  kind: 'completion',
  request: { model, prompt: 'The capital of', n: 2, max_tokens: 2, return_token_ids: true },
  chunks: [
    textChunk('cmpl-7a7a', { index: 0, text: ' France' }, counts(3, 1), {
      prompt,
      tokens: [9625],
    }),
    textChunk('cmpl-7a7a', { index: 1, text: ' Spain' }, counts(3, 1), {
      prompt,
      tokens: [17689],
    }),
    textChunk('cmpl-7a7a', { index: 0, text: ' is', finish: 'length' }, counts(3, 2), {
      tokens: [374],
    }),
    textChunk('cmpl-7a7a', { index: 1, text: ' was', finish: 'length' }, counts(3, 2), {
      tokens: [572],
    }),
    textUsage('cmpl-7a7a', 3, 4),
  ],
  full: {
    status: 200,
    body: {
      id: 'cmpl-1e4b',
      ...textFull,
      choices: [
        {
          index: 0,
          text: ' France is',
          logprobs: null,
          finish_reason: 'length',
          stop_reason: null,
          token_ids: [9625, 374],
          prompt_logprobs: null,
          prompt_token_ids: prompt,
          routed_experts: null,
        },
        {
          index: 1,
          text: ' Spain was',
          logprobs: null,
          finish_reason: 'length',
          stop_reason: null,
          token_ids: [17689, 572],
          prompt_logprobs: null,
          prompt_token_ids: prompt,
          routed_experts: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: fullUsage(3, 4),
      ...textTail,
    },
  },
}

export const vllmStreamPairs: VllmStreamPair[] = [...vllmChatStreamPairs, logprobs, tokenIds]
