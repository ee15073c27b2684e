import { KinfError } from '../../../shared/errors/kinf-error.ts'
import type { ChatMessage } from '../../../shared/openai/chat-completion-request.ts'
import { parseOpenAiRequest } from '../../../shared/openai/openai-request.ts'
import {
  ResponseEventStream,
  sseDataEvents,
} from '../../../shared/openai/responses/response-event-stream.ts'
import type { ResponseStore } from '../../../shared/openai/responses/response-store.ts'
import {
  type ResponseFrame,
  responseFromChat,
} from '../../../shared/openai/responses/responses-answer.ts'
import {
  chatBodyOf,
  inputMessages,
  parseResponsesRequest,
  type ResponsesRequest,
  type StoredConversation,
} from '../../../shared/openai/responses/responses-request.ts'
import { tracedHeaders } from '../../../shared/tracing/traced-headers.ts'
import { readBodyText } from '../read-edge-request.ts'
import { type EdgeStage, edgeStage } from '../stages/edge-stage.ts'

export interface ResponsesOptions {
  store: ResponseStore
  ttlMs: number
  maxBodyBytes: number
  nowMs: () => number
  newId: () => string
  /** The edge's own chat completions route: the request goes through every stage there. */
  chat: (request: Request, env: unknown) => Promise<Response>
  /**
   * The outer request was handed to that route as `inner`, which counts it (the app's
   * observers tell the two apart: observe-edge-requests.ts).
   */
  handedOver?: (outer: Request, inner: Request) => void
}

/** Headers of the chat answer the response keeps (ids, decision, rate limits), not its framing. */
const framing = new Set(['content-type', 'content-length', 'transfer-encoding', 'content-encoding'])

/**
 * POST /v1/responses, after authentication: the request read as the Responses API's, the
 * conversation its previous_response_id names loaded (the tenant's own only), and served
 * as a chat completion through the edge's whole pipeline (tenancy, quotas, PII, policy, the
 * scorer's routing on the same block keys, bursting), so a conversation continues on the
 * pod that holds its prefix; the answer translated back, streamed or not, and stored for
 * the next turn unless `store: false`.
 */
export function serveResponses(options: ResponsesOptions): EdgeStage<'identity', never> {
  return edgeStage(
    'serveResponses',
    { reads: ['identity'], span: 'serve' },
    async (c, _, trace) => {
      const raw = c.req.raw
      const tenant = c.get('identity').tenant
      const request = parseResponsesRequest(
        parseBody(await readBodyText(raw, options.maxBodyBytes)),
      )
      const previous = await loadPrevious(options.store, tenant, request)
      const input = inputMessages(request.input)
      const chatBody = chatBodyOf(request, previous, input)
      const headers = new Headers(raw.headers)
      headers.delete('content-length')
      headers.set('content-type', 'application/json')
      // The chat request's spans are children of this stage's.
      for (const [name, value] of Object.entries(tracedHeaders({}, trace?.span)))
        headers.set(name, value)
      const inner = new Request(new URL('/v1/chat/completions', raw.url), {
        method: 'POST',
        headers,
        body: JSON.stringify(chatBody),
        signal: raw.signal,
      })
      options.handedOver?.(raw, inner)
      const answer = await options.chat(inner, c.env)
      if (answer.status !== 200) return answer
      const frame: ResponseFrame = {
        id: `resp_${options.newId()}`,
        createdAt: Math.floor(options.nowMs() / 1000),
        request,
        newItemId: (prefix) => `${prefix}_${options.newId()}`,
      }
      const keep = (assistant: ChatMessage) =>
        request.store === false
          ? Promise.resolve()
          : options.store.put(
              tenant,
              frame.id,
              {
                model: request.model,
                messages: [...(previous?.messages ?? []), ...input, assistant],
              },
              options.ttlMs,
            )
      const kept = passedHeaders(answer.headers)
      if (request.stream !== true) {
        const chat = (await answer.json()) as Record<string, unknown>
        const { response, assistant } = responseFromChat(chat, frame)
        await keep(assistant)
        return Response.json(response, { headers: kept })
      }
      const parsed = parseOpenAiRequest('chat', chatBody)
      if ('issues' in parsed) throw new KinfError('internal', parsed.issues.message)
      const events = new ResponseEventStream(frame, parsed.request)
      kept.set('content-type', 'text/event-stream; charset=utf-8')
      kept.set('cache-control', 'no-cache')
      return new Response(translateStream(answer, events, keep), { headers: kept })
    },
  )
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new KinfError(
      'invalid_request',
      `the body is not valid JSON: ${(error as Error).message}`,
    )
  }
}

async function loadPrevious(
  store: ResponseStore,
  tenant: string,
  request: ResponsesRequest,
): Promise<StoredConversation | null> {
  const id = request.previous_response_id
  if (id == null) return null
  const previous = await store.get(tenant, id)
  if (previous === null)
    throw new KinfError('not_found', `Previous response with id '${id}' not found.`, {
      param: 'previous_response_id',
      openAiCode: 'previous_response_not_found',
    })
  return previous
}

function passedHeaders(headers: Headers): Headers {
  const kept = new Headers()
  for (const [name, value] of headers) if (!framing.has(name)) kept.set(name, value)
  return kept
}

/** The chat stream's events as Responses events; the answer stored once it completed. */
function translateStream(
  answer: Response,
  events: ResponseEventStream,
  keep: (assistant: ChatMessage) => Promise<void>,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
  let rest = ''
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(events.start()))
        // A chat stream cut for a stalled client errors this one at once, so the runtime
        // drops the connection instead of waiting for a read that never comes.
        reader.closed.catch((error: unknown) => controller.error(error))
      },
      async pull(controller) {
        const { done, value } = await reader.read()
        if (done) {
          const ended = events.end()
          if (ended.assistant) await keep(ended.assistant)
          controller.enqueue(encoder.encode(ended.events))
          controller.close()
          return
        }
        const [payloads, left] = sseDataEvents(rest + decoder.decode(value, { stream: true }))
        rest = left
        let out = ''
        for (const payload of payloads) {
          if (payload === '[DONE]') continue
          try {
            out += events.chunk(JSON.parse(payload))
          } catch {
            // A chunk that is not JSON is the assembler's to judge at the end (malformed).
          }
        }
        if (out !== '') controller.enqueue(encoder.encode(out))
      },
      cancel(reason) {
        return reader.cancel(reason)
      },
      // Pulled only as the client reads, so a stalled client leaves the chat stream's chunk
      // waiting where limitEventStream cuts the stall.
    },
    { highWaterMark: 0 },
  )
}
