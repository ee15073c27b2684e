import { KinfError } from '../../shared/errors/kinf-error.ts'
import { isRecord } from '../../shared/openai/choice-builder.ts'
import { createCompletionAssembler } from '../../shared/openai/create-completion-assembler.ts'
import { upstreamErrorBody } from '../../shared/openai/upstream-error-body.ts'
import { usageOfJson, withCachedTokens, withCachedTokensJson } from '../../shared/openai/usage.ts'
import { asciiHeaderValue } from '../../shared/policy/decision-header.ts'
import { removeDecisionHeaders } from '../../shared/policy/decision-headers-visible.ts'
import { kinferenceHeaders } from '../../shared/protocol/kinference-headers.ts'
import { promptTokensHeader } from '../../shared/scorer-api/route-protocol.ts'
import { cachedTokensInStream } from './cached-tokens-stream.ts'
import type { EdgeRequest } from './read-edge-request.ts'
import type { UpstreamOutcome } from './request-charge.ts'
import { type MeteredStream, recordUsage, tapSseUsage } from './usage-tap.ts'

export interface AnswerContext {
  requestId: string
  /**
   * Called once with how the answer ended, and the exact prompt length the scorer counted
   * (null when the answer did not come through it), for the quota ledger.
   */
  meter: (outcome: UpstreamOutcome, promptTokens: number | null) => void
  /** Collect the generated text of a stream (a provider's count needs it). */
  collectText?: boolean
  /** The tenant may see how the gateway routed (shared/policy/decision-headers-visible.ts). */
  decisionHeaders: boolean
}

/** Hop-by-hop, or no longer true once fetch has decoded and the edge re-frames the body. */
const reframed = [
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'content-encoding',
]

/**
 * The upstream's answer for the client: the decision header (the policy's part before the
 * scorer's) and fallback notes where the tenant may see them, the request id, an error in
 * OpenAI's shape whoever wrote it, and the answer metered for the quota ledger. A client
 * that asked for JSON, served from a stream (EdgeRequest.assembled), gets the stream
 * assembled. `decision` is null when the scorer decided and wrote the whole header itself.
 */
export async function answer(
  upstream: Response,
  request: EdgeRequest,
  context: AnswerContext,
  routed: { decision: string | null; notes: readonly string[] },
): Promise<Response> {
  const { headers, meter } = routedAnswer(upstream, context, routed)
  if (!upstream.ok) return errorAnswer(upstream, headers, meter)
  const isSse = (headers.get('content-type') ?? '').includes('text/event-stream')
  if (isSse && upstream.body && request.assembled && !request.stream)
    return assembledAnswer(upstream.body, request, headers, context, meter)
  if (isSse && upstream.body) {
    const body = tapSseUsage(upstream.body, {
      dropUsageChunk: !request.includeUsage,
      recordFor: request,
      stripChunkUsage: !request.continuousUsage,
      ...(context.collectText ? { collectText: true } : {}),
      onEnd: (metered) => meter(streamOutcome(metered)),
    })
    return new Response(cachedTokensInStream(body), { status: upstream.status, headers })
  }
  // A body that breaks half-way (the scorer or its pod gone) is an upstream failure, not ours.
  const text = await upstream.text().catch((error: unknown) => {
    meter({ kind: 'cut', metered: null })
    throw brokenAnswer(error)
  })
  const usage = usageOfJson(text)
  if (usage) recordUsage(request, usage)
  meter({ kind: 'answered', usage })
  return new Response(withCachedTokensJson(text), { status: upstream.status, headers })
}

/**
 * An embeddings answer for the client: answer()'s headers and errors, the JSON passed on as
 * the pod wrote it (its usage has no cached tokens to add), metered on its usage.
 */
export async function answerEmbeddings(
  upstream: Response,
  context: AnswerContext,
  routed: { decision: string | null; notes: readonly string[] },
): Promise<Response> {
  const { headers, meter } = routedAnswer(upstream, context, routed)
  if (!upstream.ok) return errorAnswer(upstream, headers, meter)
  const text = await upstream.text().catch((error: unknown) => {
    meter({ kind: 'cut', metered: null })
    throw brokenAnswer(error)
  })
  meter({ kind: 'answered', usage: usageOfJson(text) })
  return new Response(text, { status: upstream.status, headers })
}

/**
 * The client's headers for an upstream's answer (routedHeaders), and its meter, which
 * charges on the exact prompt length the scorer counted when it says one.
 */
function routedAnswer(
  upstream: Response,
  context: AnswerContext,
  routed: { decision: string | null; notes: readonly string[] },
): { headers: Headers; meter: (outcome: UpstreamOutcome) => void } {
  const headers = routedHeaders(upstream, context, routed)
  const exact = Number(headers.get(promptTokensHeader))
  const promptTokens = Number.isInteger(exact) && exact > 0 ? exact : null
  return { headers, meter: (outcome) => context.meter(outcome, promptTokens) }
}

function routedHeaders(
  upstream: Response,
  context: AnswerContext,
  routed: { decision: string | null; notes: readonly string[] },
): Headers {
  const headers = new Headers(upstream.headers)
  const { decision, fallback: fallbackHeader } = kinferenceHeaders
  const below = headers.get(decision)
  if (routed.decision !== null)
    headers.set(decision, below ? `${routed.decision}; ${below}` : routed.decision)
  const fallback = [...routed.notes, ...(headers.get(fallbackHeader) ?? '').split('; ')]
    .filter(Boolean)
    .join('; ')
  if (fallback !== '') headers.set(fallbackHeader, asciiHeaderValue(fallback))
  if (!context.decisionHeaders) removeDecisionHeaders(headers)
  headers.set('x-request-id', context.requestId)
  for (const name of reframed) headers.delete(name)
  return headers
}

/** An upstream's error, in OpenAI's shape whatever it was written in (vLLM's, a proxy's page). */
async function errorAnswer(
  upstream: Response,
  headers: Headers,
  meter: (outcome: UpstreamOutcome) => void,
): Promise<Response> {
  meter({ kind: 'refused' })
  const text = await upstream.text().catch(() => '')
  const shaped = upstreamErrorBody(upstream.status, text)
  headers.set('content-type', 'application/json')
  return new Response(JSON.stringify(shaped.body), { status: shaped.status, headers })
}

/**
 * A stream read to its end at the edge and answered as one JSON body. The client leaving
 * aborts the upstream (its signal is the fetch's), and the meter sees how far it got.
 */
async function assembledAnswer(
  body: ReadableStream<Uint8Array>,
  request: EdgeRequest,
  headers: Headers,
  context: AnswerContext,
  meter: (outcome: UpstreamOutcome) => void,
): Promise<Response> {
  const assembler = createCompletionAssembler(request.openAi)
  let metered: MeteredStream | null = null
  const tapped = tapSseUsage(body, {
    dropUsageChunk: true,
    stripChunkUsage: false,
    ...(context.collectText ? { collectText: true } : {}),
    onChunk: (chunk) => assembler.add(chunk),
    onEnd: (seen) => {
      metered = seen
      meter(streamOutcome(seen))
    },
  })
  const reader = tapped.getReader()
  while (!(await reader.read()).done) {
    // The tap meters and assembles as the bytes go by.
  }
  const result = assembler.result()
  if (result.type === 'upstream_error') {
    const shaped = upstreamErrorBody(result.status, JSON.stringify(result.body))
    headers.set('content-type', 'application/json')
    return new Response(JSON.stringify(shaped.body), { status: shaped.status, headers })
  }
  if (!(metered as MeteredStream | null)?.complete) throw brokenAnswer(null)
  if (result.type === 'malformed') throw result.error
  headers.set('content-type', 'application/json')
  headers.delete('cache-control')
  const { usage } = result.body
  const answered = isRecord(usage)
    ? { ...result.body, usage: withCachedTokens(usage) }
    : result.body
  return new Response(JSON.stringify(answered), { status: 200, headers })
}

function streamOutcome(metered: MeteredStream): UpstreamOutcome {
  return metered.complete ? { kind: 'answered', usage: metered.usage } : { kind: 'cut', metered }
}

function brokenAnswer(cause: unknown): KinfError {
  return new KinfError('upstream_error', 'the answer stopped upstream before it was complete', {
    ...(cause === null ? {} : { cause }),
  })
}
