import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ConverseCommandInput,
  ConverseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime'
import { z } from 'zod'
import type { ConverseRequest } from '../../shared/bedrock/converse-request.ts'
import { ConverseResponse } from '../../shared/bedrock/converse-response.ts'
import { ConverseStreamEvent } from '../../shared/bedrock/converse-stream-event.ts'
import { ConverseStreamTranslator } from '../../shared/bedrock/converse-stream-translator.ts'
import { isMalformedStop, toChatCompletion } from '../../shared/bedrock/to-chat-completion.ts'
import { toConverseRequest } from '../../shared/bedrock/to-converse-request.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import type { ChatCompletionRequest } from '../../shared/openai/chat-completion-request.ts'
import { openAiErrorBody } from '../../shared/openai/openai-error-body.ts'
import { bedrockAbortError, bedrockError, errorName } from './bedrock-error.ts'
import { RetryBudget } from './bedrock-retry-budget.ts'
import { converseSdkMessages } from './converse-sdk-messages.ts'

export interface BedrockTarget {
  region: string
  /** A VPC endpoint, or a Bedrock-compatible server (tests, demos). */
  endpoint?: string
  modelId: string
  maxOutputTokens?: number
  /**
   * Explicit keys. Without them the SDK's default chain is used (environment, IRSA, ...),
   * which exists on Node only: on Workers, credentials must be passed here.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
}

export interface CallBedrockOptions {
  /** The model name the client asked for; Bedrock's answer names none. */
  requestedModel: string
  /** Client gone or deadline passed (AbortSignal.timeout: answered as upstream_unavailable). */
  signal?: AbortSignal
  /** Retries of throttling and unavailability before the first byte (see BedrockRetries). */
  maxRetries?: number
  /** Tests: the backoff's randomness in [0, 1) and its sleep. */
  random?: () => number
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** Tests: the calls that may be retrying at once (else this process's, shared by all). */
  retryBudget?: RetryBudget
}

/** Retries of a call before its first byte: 2 (3 attempts) unless told. */
const BedrockRetries = z.int().min(0).max(10).default(2)

/** Worth another attempt, before any byte went to the client (the SDK's own retries are off). */
const retryable = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'ModelNotReadyException',
  'InternalServerException',
])
const backoffBaseMs = 250
const backoffCapMs = 8_000

const encoder = new TextEncoder()
const done = encoder.encode('data: [DONE]\n\n')
const sse = (value: unknown) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`)

const clients = new Map<string, BedrockRuntimeClient>()
/** Every call of this process (or isolate): how many may be retrying at once. */
const sharedRetryBudget = new RetryBudget()

/** One client per region, endpoint and key: clients hold connection pools worth reusing. */
export function bedrockClientFor(target: BedrockTarget): BedrockRuntimeClient {
  const key = JSON.stringify([target.region, target.endpoint, target.credentials])
  let client = clients.get(key)
  if (!client) {
    if (clients.size >= 32) {
      for (const old of clients.values()) old.destroy()
      clients.clear()
    }
    client = new BedrockRuntimeClient({
      region: target.region,
      ...(target.endpoint ? { endpoint: target.endpoint } : {}),
      ...(target.credentials ? { credentials: target.credentials } : {}),
      maxAttempts: 1,
    })
    clients.set(key, client)
  }
  return client
}

/** Equal jitter: half the exponential step, plus up to half again at random. */
function backoffMs(attempt: number, random: () => number): number {
  const step = Math.min(backoffCapMs, backoffBaseMs * 2 ** attempt)
  return step / 2 + random() * (step / 2)
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })
}

/** The wire-shaped request as the SDK's input: the same, but image bytes decoded. */
function sdkInput(modelId: string, converse: ConverseRequest): ConverseCommandInput {
  return { ...converse, modelId, messages: converseSdkMessages(converse.messages) }
}

function logMalformedStop(modelId: string, stopReason: string | undefined): void {
  if (stopReason !== undefined && isMalformedStop(stopReason)) {
    console.warn(`bedrock: ${modelId} stopped with ${stopReason} (answered as finish_reason stop)`)
  }
}

/**
 * One OpenAI chat completion through Bedrock's Converse API: a JSON chat.completion, or
 * an SSE stream of chat.completion.chunk ending in `data: [DONE]`. Throws KinfError
 * before the first byte (invalid_request for what Bedrock cannot take, rate_limited with
 * retryAfterSeconds when throttling outlasts the retries, upstream_*); once streaming,
 * a failure is an OpenAI-shaped error event, and the stream ends.
 */
export async function callBedrock(
  target: BedrockTarget,
  request: ChatCompletionRequest,
  options: CallBedrockOptions,
): Promise<Response> {
  const converse = toConverseRequest(request, target)
  const input = sdkInput(target.modelId, converse)
  const client = bedrockClientFor(target)
  const { signal, random = Math.random, sleep = defaultSleep } = options
  const maxRetries = BedrockRetries.parse(options.maxRetries)
  // Aborted when the caller's signal fires, or when the client cancels the stream.
  const upstream = new AbortController()
  const forwardAbort = () => upstream.abort(signal?.reason)
  if (signal?.aborted) throw bedrockAbortError(signal)
  signal?.addEventListener('abort', forwardAbort, { once: true })
  const created = Math.floor(Date.now() / 1000)
  const identity = (requestId: string | undefined) => ({
    id: `chatcmpl-${requestId ?? crypto.randomUUID()}`,
    model: options.requestedModel,
    created,
  })

  const budget = (options.retryBudget ?? sharedRetryBudget).begin()
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        if (request.stream) {
          const output = await client.send(new ConverseStreamCommand(input), {
            abortSignal: upstream.signal,
          })
          if (!output.stream) throw new KinfError('upstream_error', 'Bedrock sent no event stream')
          const events = output.stream[Symbol.asyncIterator]()
          // The first event before any byte goes out: a failure before it (an exception in the
          // stream, the deadline) is still an HTTP answer with Retry-After, and worth a retry.
          const first = await events.next()
          // An aborted stream may just end: the deadline, not an empty answer.
          if (signal?.aborted) throw bedrockAbortError(signal)
          return streamResponse(events, first, {
            ...identity(output.$metadata.requestId),
            includeUsage: request.stream_options?.include_usage === true,
            modelId: target.modelId,
            upstream,
            ...(signal ? { signal } : {}),
            release: () => signal?.removeEventListener('abort', forwardAbort),
          })
        }
        const output = await client.send(new ConverseCommand(input), {
          abortSignal: upstream.signal,
        })
        signal?.removeEventListener('abort', forwardAbort)
        const parsed = ConverseResponse.safeParse(output)
        if (!parsed.success) {
          throw new KinfError('upstream_error', 'Bedrock answered Converse in an unexpected shape')
        }
        logMalformedStop(target.modelId, parsed.data.stopReason)
        const completion = toChatCompletion(parsed.data, identity(output.$metadata.requestId))
        return new Response(JSON.stringify(completion), {
          headers: { 'content-type': 'application/json' },
        })
      } catch (error) {
        if (signal?.aborted) throw bedrockAbortError(signal)
        const hint = Math.ceil(backoffMs(attempt + 1, () => 1) / 1000)
        // Past the budget, a storm is answered at once rather than tried again.
        if (!retryable.has(errorName(error)) || attempt >= maxRetries || !budget.retry()) {
          signal?.removeEventListener('abort', forwardAbort)
          throw bedrockError(error, hint)
        }
        try {
          await sleep(backoffMs(attempt, random), upstream.signal)
        } catch {
          throw bedrockAbortError(signal ?? upstream.signal)
        }
      }
    }
  } finally {
    budget.end()
  }
}

interface StreamContext {
  id: string
  model: string
  created: number
  includeUsage: boolean
  modelId: string
  upstream: AbortController
  /** The caller's signal: when it fired, the error event says so (deadline or cancel). */
  signal?: AbortSignal
  release: () => void
}

/** SSE from the SDK's events (the first already read); pulled as the client reads, cancelled when it leaves. */
function streamResponse(
  iterator: AsyncIterator<unknown>,
  first: IteratorResult<unknown>,
  context: StreamContext,
): Response {
  const translator = new ConverseStreamTranslator(context)
  let pending: IteratorResult<unknown> | null = first
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Some events (contentBlockStop, metadata without include_usage) yield no chunk.
        for (;;) {
          const next = pending ?? (await iterator.next())
          pending = null
          if (next.done) {
            if (translator.stopReason === undefined) {
              throw new KinfError('upstream_error', 'Bedrock ended the stream before messageStop')
            }
            logMalformedStop(context.modelId, translator.stopReason)
            controller.enqueue(done)
            controller.close()
            context.release()
            return
          }
          const event = ConverseStreamEvent.safeParse(next.value)
          if (!event.success) continue
          const chunks = translator.translate(event.data)
          for (const chunk of chunks) controller.enqueue(sse(chunk))
          if (chunks.length > 0) return
        }
      } catch (error) {
        context.release()
        if (cancelled) return
        // Bytes are out: no failover, tell the client in OpenAI's shape and end.
        const failure = context.signal?.aborted
          ? bedrockAbortError(context.signal)
          : bedrockError(error)
        controller.enqueue(sse(openAiErrorBody(failure)))
        controller.close()
      }
    },
    cancel() {
      cancelled = true
      context.release()
      context.upstream.abort()
      iterator.return?.().catch(() => {})
    },
  })
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    },
  })
}
