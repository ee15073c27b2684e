import type { RequestKind } from '../../../shared/openai/openai-request.ts'
import type { Usage } from '../../../shared/openai/usage.ts'
import type { FinishReason } from './engine/vllm-engine.ts'

/**
 * vLLM's usage block. prompt_tokens_details.cached_tokens is there only when the server
 * runs with --enable-prompt-tokens-details (`cachedTokens` not null), and then also when
 * nothing was cached: since vLLM #44383 (June 2026) the serving code tests the count for
 * None, not for truthiness (`_make_prompt_tokens_details` in
 * vllm/entrypoints/openai/chat_completion/serving.py); releases before it left 0 out.
 */
export function usage(
  promptTokens: number,
  completionTokens: number,
  cachedTokens: number | null,
): Usage {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    ...(cachedTokens !== null && { prompt_tokens_details: { cached_tokens: cachedTokens } }),
  }
}

/**
 * SSE chunks in vLLM's shape (fields as vLLM serialises them with exclude_unset). The
 * constant head of every chunk is built once per request: the stream is the hot path.
 */
export function createChunkWriter(kind: RequestKind, id: string, created: number, model: string) {
  const object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion'
  const head = `data: {"id":${JSON.stringify(id)},"object":"${object}","created":${created},"model":${JSON.stringify(model)},"choices":[`
  const usageField = (value: Usage | null) => (value ? `,"usage":${JSON.stringify(value)}` : '')
  return {
    /** The role chunk vLLM sends before the first content of a chat stream (each choice's). */
    role(index = 0): string {
      return kind === 'chat'
        ? `${head}{"index":${index},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n`
        : ''
    },
    token(text: string, finish: FinishReason | null, running: Usage | null, index = 0): string {
      const reason = finish ? `"${finish}","stop_reason":null` : 'null'
      const body =
        kind === 'chat'
          ? `{"index":${index},"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":${reason}}`
          : `{"index":${index},"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${reason}}`
      return `${head}${body}]${usageField(running)}}\n\n`
    },
    usage(value: Usage): string {
      return `${head}]${usageField(value)}}\n\n`
    },
    error(status: number, message: string): string {
      return `data: ${JSON.stringify({ error: { message, type: 'InternalServerError', param: null, code: status } })}\n\n`
    },
    done(): string {
      return 'data: [DONE]\n\n'
    },
  }
}

/** One choice of a finished generation. */
export interface FinishedChoice {
  text: string
  finish: FinishReason
}

/** The non-streaming body of a finished generation, its choices in index order. */
export function completionBody(
  kind: RequestKind,
  id: string,
  created: number,
  model: string,
  choices: readonly FinishedChoice[],
  totals: Usage,
): object {
  return {
    id,
    object: kind === 'chat' ? 'chat.completion' : 'text_completion',
    created,
    model,
    choices: choices.map((choice, index) => choiceBody(kind, index, choice)),
    service_tier: null,
    system_fingerprint: null,
    usage: totals,
    prompt_logprobs: null,
    kv_transfer_params: null,
  }
}

function choiceBody(kind: RequestKind, index: number, { text, finish }: FinishedChoice): object {
  if (kind === 'completion')
    return {
      index,
      text,
      logprobs: null,
      finish_reason: finish,
      stop_reason: null,
      prompt_logprobs: null,
    }
  return {
    index,
    message: {
      role: 'assistant',
      content: text,
      refusal: null,
      annotations: null,
      audio: null,
      function_call: null,
      tool_calls: [],
      reasoning_content: null,
    },
    logprobs: null,
    finish_reason: finish,
    stop_reason: null,
  }
}
