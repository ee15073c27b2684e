import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { maxTokensField, type OpenAiRequest } from '../../shared/openai/openai-request.ts'
import type { EdgeLimits } from './edge-deps.ts'

/**
 * Request headers as they came, names and values plus ": " and CRLF each: 431 past the
 * limit, in the app so that a Worker answers it too (Node's parser is set to about the same).
 */
export function checkHeaderBytes(headers: Headers, limit: number): void {
  let bytes = 0
  for (const [name, value] of headers) bytes += name.length + value.length + 4
  if (bytes > limit)
    throw new KinfError(
      'payload_too_large',
      `request headers are ${bytes} bytes, more than the ${limit} this service accepts`,
      { status: 431, openAiCode: 'request_header_fields_too_large' },
    )
}

/** Counts the client controls: messages, tools, stop sequences and max_tokens. */
export function checkRequestCounts(request: OpenAiRequest, limits: EdgeLimits): void {
  const { body } = request
  if (request.kind === 'chat') {
    atMost(request.body.messages.length, limits.maxMessages, 'messages', 'messages')
    atMost(request.body.tools?.length ?? 0, limits.maxTools, 'tools', 'tools')
  }
  if (Array.isArray(body.stop))
    atMost(body.stop.length, limits.maxStopSequences, 'stop sequences', 'stop')
  const choices = body as { n?: number | null; best_of?: number | null }
  atMost(choices.n ?? 1, limits.maxChoices, 'choices (n)', 'n')
  atMost(choices.best_of ?? 1, limits.maxChoices, 'candidates (best_of)', 'best_of')
  const field = maxTokensField(request)
  const maxTokens = body[field as 'max_tokens']
  if (maxTokens == null) return
  if (maxTokens < 1)
    throw new KinfError('invalid_request', `${field} must be at least 1, got ${maxTokens}`, {
      param: field,
    })
  if (maxTokens > limits.maxOutputTokens)
    throw new KinfError(
      'invalid_request',
      `${field} is ${maxTokens}, more than the ${limits.maxOutputTokens} this service allows`,
      { param: field },
    )
}

function atMost(count: number, limit: number, what: string, param: string): void {
  if (count > limit)
    throw new KinfError(
      'invalid_request',
      `${count} ${what} in one request, more than the ${limit} this service accepts`,
      { param },
    )
}

/**
 * The prompt (the edge's estimate, or the token ids of a completion) plus max_tokens
 * against the model's context (the pools' maxContextTokens for it) or, for a model the
 * snapshot gives no context to (Bedrock's, aliases), maxRequestTokens: OpenAI's 400
 * context_length_exceeded.
 */
export function checkRequestTokens(
  snapshot: ConfigSnapshot,
  request: { openAi: OpenAiRequest; model: string; promptTokens: number; maxTokens: number | null },
  limits: EdgeLimits,
): void {
  const context = contextTokensOf(snapshot, request.model) ?? limits.maxRequestTokens
  const output = request.maxTokens ?? 0
  if (request.promptTokens + output <= context) return
  throw new KinfError(
    'invalid_request',
    `This model's maximum context length is ${context} tokens. However, you requested about ${request.promptTokens + output} tokens (${request.promptTokens} in the ${request.openAi.kind === 'chat' ? 'messages' : 'prompt'}, ${output} in the completion). Please reduce the length of the ${request.openAi.kind === 'chat' ? 'messages' : 'prompt'} or completion.`,
    {
      param: request.openAi.kind === 'chat' ? 'messages' : 'prompt',
      openAiCode: 'context_length_exceeded',
    },
  )
}

const contextsBySnapshot = new WeakMap<ConfigSnapshot, Map<string, number>>()

/** The largest maxContextTokens any pool serves the model with, or null. */
function contextTokensOf(snapshot: ConfigSnapshot, model: string): number | null {
  let contexts = contextsBySnapshot.get(snapshot)
  if (!contexts) {
    contexts = new Map()
    for (const pool of Object.values(snapshot.pools))
      for (const served of pool.spec.models)
        contexts.set(served.name, Math.max(contexts.get(served.name) ?? 0, served.maxContextTokens))
    contextsBySnapshot.set(snapshot, contexts)
  }
  return contexts.get(model) ?? null
}
