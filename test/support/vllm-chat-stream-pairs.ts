import type { VllmStreamPair } from './vllm-stream-pairs.ts'

/** The chat half of vllm-stream-pairs.ts (which says how they are written). */
const model = 'qwen3.8-27b-fp8'
const messages = [{ role: 'user', content: 'Hi' }]
const chatHead = { object: 'chat.completion.chunk', created: 1789095808, model }
const chatFull = { object: 'chat.completion', created: 1789095811, model }
const chatTail = {
  prompt_logprobs: null,
  prompt_token_ids: null,
  prompt_text: null,
  kv_transfer_params: null,
  ec_transfer_params: null,
  metrics: null,
}
const noMessageExtras = { refusal: null, annotations: null, audio: null, function_call: null }

/** A chat chunk of choice `index`: delta, logprobs, finish as vLLM sets them. */
function chatChunk(
  id: string,
  index: number,
  delta: object,
  usage: object,
  more: { logprobs?: object | null; finish?: string; stop?: number | string | null } = {},
) {
  const end = more.finish === undefined ? {} : { stop_reason: more.stop ?? null }
  return {
    id,
    ...chatHead,
    choices: [
      {
        index,
        delta,
        logprobs: more.logprobs ?? null,
        finish_reason: more.finish ?? null,
        ...end,
        token_ids: null,
      },
    ],
    usage,
  }
}

/** The first chunk of each chat choice: vLLM passes no token_ids there. */
function roleChunk(id: string, index: number, usage: object) {
  return {
    id,
    ...chatHead,
    choices: [
      {
        index,
        delta: { role: 'assistant', content: '' },
        logprobs: null,
        finish_reason: null,
      },
    ],
    usage,
  }
}

const running = (prompt: number, completion: number, details?: object) => ({
  prompt_tokens: prompt,
  total_tokens: prompt + completion,
  completion_tokens: completion,
  completion_tokens_details: details ?? null,
})

const lp = (token: string, logprob: number) => {
  const bytes = [...new TextEncoder().encode(token)]
  return { token, logprob, bytes, top_logprobs: [{ token, logprob, bytes }] }
}

const plain: VllmStreamPair = {
  name: 'chat: content in pieces, a cached prompt (--enable-prompt-tokens-details)',
  kind: 'chat',
  request: { model, messages, max_tokens: 16 },
  chunks: [
    roleChunk('chatcmpl-7d1e', 0, running(40, 0)),
    chatChunk('chatcmpl-7d1e', 0, { content: 'Hello' }, running(40, 1)),
    chatChunk('chatcmpl-7d1e', 0, { content: ', world' }, running(40, 3)),
    chatChunk('chatcmpl-7d1e', 0, { content: '' }, running(40, 4), { finish: 'stop' }),
    {
      id: 'chatcmpl-7d1e',
      ...chatHead,
      choices: [],
      usage: {
        prompt_tokens: 40,
        total_tokens: 44,
        completion_tokens: 4,
        prompt_tokens_details: { cached_tokens: 32 },
      },
    },
  ],
  full: {
    status: 200,
    body: {
      id: 'chatcmpl-0b52',
      ...chatFull,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello, world',
            ...noMessageExtras,
            reasoning: null,
          },
          logprobs: null,
          finish_reason: 'stop',
          stop_reason: null,
          token_ids: null,
          routed_experts: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: {
        prompt_tokens: 40,
        total_tokens: 44,
        completion_tokens: 4,
        prompt_tokens_details: {
          cached_tokens: 32,
          created_cache_tokens: null,
          multimodal_tokens: null,
        },
        completion_tokens_details: null,
      },
      ...chatTail,
    },
  },
}

const reasoning = (n: number) => ({ reasoning_tokens: n })
const toolsId = 'chatcmpl-a41c'
const tools: VllmStreamPair = {
  name: 'chat: reasoning, then two tool calls split over chunks (qwen3 and hermes parsers)',
  kind: 'chat',
  request: {
    model,
    messages,
    tools: [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
    ],
  },
  chunks: [
    roleChunk(toolsId, 0, running(120, 0, reasoning(0))),
    chatChunk(toolsId, 0, { reasoning: 'The user wants' }, running(120, 4, reasoning(4))),
    chatChunk(toolsId, 0, { reasoning: ' the weather.' }, running(120, 9, reasoning(9))),
    chatChunk(
      toolsId,
      0,
      {
        tool_calls: [
          {
            id: 'chatcmpl-tool-9a1',
            type: 'function',
            index: 0,
            function: { name: 'get_weather' },
          },
        ],
      },
      running(120, 14, reasoning(9)),
    ),
    chatChunk(
      toolsId,
      0,
      { tool_calls: [{ index: 0, function: { arguments: '{"city": "' } }] },
      running(120, 18, reasoning(9)),
    ),
    chatChunk(
      toolsId,
      0,
      { tool_calls: [{ index: 0, function: { arguments: 'Paris"}' } }] },
      running(120, 20, reasoning(9)),
    ),
    chatChunk(
      toolsId,
      0,
      {
        tool_calls: [
          { id: 'chatcmpl-tool-4be', type: 'function', index: 1, function: { name: 'get_time' } },
        ],
      },
      running(120, 25, reasoning(9)),
    ),
    chatChunk(
      toolsId,
      0,
      { tool_calls: [{ index: 1, function: { arguments: '{"tz": "CET"}' } }] },
      running(120, 29, reasoning(9)),
    ),
    chatChunk(toolsId, 0, {}, running(120, 30, reasoning(9)), { finish: 'tool_calls' }),
    {
      id: toolsId,
      ...chatHead,
      choices: [],
      usage: {
        prompt_tokens: 120,
        total_tokens: 150,
        completion_tokens: 30,
        completion_tokens_details: reasoning(9),
      },
    },
  ],
  full: {
    status: 200,
    body: {
      id: 'chatcmpl-e0f3',
      ...chatFull,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            ...noMessageExtras,
            tool_calls: [
              {
                id: 'chatcmpl-tool-51d',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city": "Paris"}' },
              },
              {
                id: 'chatcmpl-tool-c07',
                type: 'function',
                function: { name: 'get_time', arguments: '{"tz": "CET"}' },
              },
            ],
            reasoning: 'The user wants the weather.',
          },
          logprobs: null,
          finish_reason: 'tool_calls',
          stop_reason: null,
          token_ids: null,
          routed_experts: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: {
        prompt_tokens: 120,
        total_tokens: 150,
        completion_tokens: 30,
        prompt_tokens_details: null,
        completion_tokens_details: reasoning(9),
      },
      ...chatTail,
    },
  },
}

const twoId = 'chatcmpl-52aa'
const two: VllmStreamPair = {
  name: 'chat: n = 2 interleaved, logprobs, one choice ended by a stop string',
  kind: 'chat',
  request: { model, messages, n: 2, logprobs: true, top_logprobs: 1, stop: ['END'], max_tokens: 3 },
  chunks: [
    roleChunk(twoId, 0, running(12, 0)),
    roleChunk(twoId, 1, running(12, 0)),
    chatChunk(twoId, 0, { content: 'Hi' }, running(12, 1), {
      logprobs: { content: [lp('Hi', -0.1)] },
    }),
    chatChunk(twoId, 1, { content: ' yes' }, running(12, 1), {
      logprobs: { content: [lp(' yes', -0.7)] },
    }),
    chatChunk(twoId, 0, { content: ' there' }, running(12, 2), {
      logprobs: { content: [lp(' there', -0.4)] },
    }),
    chatChunk(twoId, 1, { content: '' }, running(12, 2), {
      logprobs: { content: [lp(' END', -0.2)] },
      finish: 'stop',
      stop: 'END',
    }),
    chatChunk(twoId, 0, { content: ' friend' }, running(12, 3), {
      logprobs: { content: [lp(' friend', -1.5)] },
      finish: 'length',
    }),
    {
      id: twoId,
      ...chatHead,
      choices: [],
      usage: { prompt_tokens: 12, total_tokens: 17, completion_tokens: 5 },
    },
  ],
  full: {
    status: 200,
    body: {
      id: 'chatcmpl-91c0',
      ...chatFull,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hi there friend',
            ...noMessageExtras,
            reasoning: null,
          },
          logprobs: { content: [lp('Hi', -0.1), lp(' there', -0.4), lp(' friend', -1.5)] },
          finish_reason: 'length',
          stop_reason: null,
          token_ids: null,
          routed_experts: null,
        },
        {
          index: 1,
          message: { role: 'assistant', content: ' yes', ...noMessageExtras, reasoning: null },
          logprobs: { content: [lp(' yes', -0.7), lp(' END', -0.2)] },
          finish_reason: 'stop',
          stop_reason: 'END',
          token_ids: null,
          routed_experts: null,
        },
      ],
      service_tier: null,
      system_fingerprint: null,
      usage: {
        prompt_tokens: 12,
        total_tokens: 17,
        completion_tokens: 5,
        prompt_tokens_details: null,
        completion_tokens_details: null,
      },
      ...chatTail,
    },
  },
}

/** The engine failed mid-generation: vLLM's GenerationError, a 500 either way. */
const engineError = {
  message: 'Internal server error',
  type: 'InternalServerError',
  param: null,
  code: 500,
}
const failed: VllmStreamPair = {
  name: 'chat: an error event mid-stream',
  kind: 'chat',
  request: { model, messages },
  chunks: [
    roleChunk('chatcmpl-ee01', 0, running(9, 0)),
    chatChunk('chatcmpl-ee01', 0, { content: 'Par' }, running(9, 1)),
    { error: engineError },
  ],
  full: { status: 500, body: { error: engineError } },
}

export const vllmChatStreamPairs: VllmStreamPair[] = [plain, tools, two, failed]
