import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai'
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import { readChaosStream } from './read-chaos-stream.ts'

/** What became of one request, as a client would judge it, and when it was sent. */
export type RequestOutcome = Verdict & { startedMs: number }

type Verdict =
  | {
      kind: 'completed'
      status: number
      /** The pod the edge's decision header names (null: not routed to a pod, e.g. Bedrock). */
      pod: string | null
      cachedTokens: number | null
      /** usage.prompt_tokens, when the answer reported usage: with cachedTokens, the hit rate. */
      promptTokens?: number | null
      ttftMs: number | null
      latencyMs: number
    }
  /** An OpenAI-shaped error: a 4xx/5xx with an error body, or an error event then [DONE]. */
  | {
      kind: 'clean-error'
      status: number
      code: string
      retryAfter: string | null
      latencyMs: number
    }
  /** No answer, a hang, a truncated stream without an error event, a 5xx without a body. */
  | { kind: 'lost'; why: string; latencyMs: number }

export interface ChaosRequest {
  model: string
  messages: ChatCompletionMessageParam[]
  maxTokens: number
  stream: boolean
  /** Past this the request counts as a hang (lost). */
  timeoutMs: number
  /** Called with each SSE event's data as it arrives (tests of mid-stream faults). */
  onEvent?: (data: string) => void
  /** Sent as x-request-id, to find the request again in what the pods and the scorer logged. */
  requestId?: string
}

export interface ChaosClient {
  send(request: ChaosRequest): Promise<RequestOutcome>
}

type ChaosSend = (request: ChaosRequest, startedMs: number) => Promise<Verdict>

/**
 * Requests through the edge with the official `openai` client, with its retries off so
 * every failure is seen. Streams are read from the raw response so a stream that stops
 * without `[DONE]` is told apart from one that ended with an error event.
 */
export function createChaosClient(options: {
  baseUrl: string
  apiKey: string
  nowMs: () => number
}): ChaosClient {
  const client = new OpenAI({
    baseURL: `${options.baseUrl}/v1`,
    apiKey: options.apiKey,
    maxRetries: 0,
  })
  const judge: ChaosSend = async (request, started) => {
    const elapsed = () => options.nowMs() - started
    const headers = request.requestId ? { 'x-request-id': request.requestId } : {}
    try {
      const params = {
        model: request.model,
        messages: request.messages,
        max_tokens: request.maxTokens,
      }
      if (request.stream) {
        const response = await client.chat.completions
          .create(
            { ...params, stream: true, stream_options: { include_usage: true } },
            { timeout: request.timeoutMs, headers },
          )
          .asResponse()
        return await readStream(response, request, started, options.nowMs)
      }
      const { data, response } = await client.chat.completions
        .create(params, { timeout: request.timeoutMs, headers })
        .withResponse()
      if (!Array.isArray(data.choices) || data.choices.length === 0)
        return { kind: 'lost', why: 'a 200 without choices', latencyMs: elapsed() }
      return completed(response, data.usage ?? null, null, elapsed())
    } catch (error) {
      return failedOutcome(error, elapsed())
    }
  }
  return {
    async send(request) {
      const startedMs = options.nowMs()
      return { ...(await judge(request, startedMs)), startedMs }
    },
  }
}

function completed(
  response: Response,
  usage: OpenAI.CompletionUsage | null,
  ttftMs: number | null,
  latencyMs: number,
): Verdict {
  const decision = response.headers.get(kinferenceHeaders.decision) ?? ''
  return {
    kind: 'completed',
    status: response.status,
    pod: /pod=([^;\s]+)/.exec(decision)?.[1] ?? null,
    cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    promptTokens: usage?.prompt_tokens ?? null,
    ttftMs,
    latencyMs,
  }
}

function failedOutcome(error: unknown, latencyMs: number): Verdict {
  if (error instanceof APIConnectionTimeoutError)
    return { kind: 'lost', why: 'no answer before the timeout (a hang)', latencyMs }
  if (error instanceof APIConnectionError) {
    // The client's own words ("Connection error.") say nothing of a reset or a timeout.
    const cause = (error.cause as { cause?: Error; message?: string } | undefined)?.cause?.message
    return {
      kind: 'lost',
      why: `no answer: ${error.message}${cause ? ` (${cause})` : ''}`,
      latencyMs,
    }
  }
  if (error instanceof APIError && error.status !== undefined) {
    const body = error.error as { message?: unknown; type?: unknown; code?: unknown } | undefined
    if (typeof body?.message !== 'string' || typeof body.type !== 'string')
      return { kind: 'lost', why: `HTTP ${error.status} without an OpenAI error body`, latencyMs }
    return {
      kind: 'clean-error',
      status: error.status,
      code: typeof body.code === 'string' ? body.code : body.type,
      retryAfter: error.headers?.get('retry-after') ?? null,
      latencyMs,
    }
  }
  return { kind: 'lost', why: `client error: ${(error as Error).message}`, latencyMs }
}

async function readStream(
  response: Response,
  request: ChaosRequest,
  startedMs: number,
  nowMs: () => number,
): Promise<Verdict> {
  const verdict = await readChaosStream(
    response.body,
    startedMs + request.timeoutMs,
    nowMs,
    request.onEvent,
  )
  const latencyMs = nowMs() - startedMs
  if (verdict.errorCode !== null)
    return {
      kind: 'clean-error',
      status: response.status,
      code: verdict.errorCode,
      retryAfter: null,
      latencyMs,
    }
  if (verdict.broken !== null) return { kind: 'lost', why: verdict.broken, latencyMs }
  if (!verdict.done)
    return { kind: 'lost', why: 'the stream ended without [DONE] or an error event', latencyMs }
  if (!verdict.finished)
    return { kind: 'lost', why: 'the stream ended without a finish_reason', latencyMs }
  const ttftMs = verdict.firstTokenAtMs === null ? null : verdict.firstTokenAtMs - startedMs
  return completed(response, verdict.usage, ttftMs, latencyMs)
}
