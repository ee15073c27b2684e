import {
  type BedrockRuntimeClient,
  type ConverseTokensRequest,
  CountTokensCommand,
} from '@aws-sdk/client-bedrock-runtime'
import type { ConverseRequest } from '../../shared/bedrock/converse-request.ts'
import { converseSdkMessages } from './converse-sdk-messages.ts'

/**
 * Models that answered they cannot count tokens, per client (a client is one region,
 * endpoint and key): asked once, not again on every abandoned request. A client the
 * caller drops takes its entries with it.
 */
const unsupported = new WeakMap<BedrockRuntimeClient, Set<string>>()

/** Bedrock's ValidationException for a model without CountTokens. */
function isUnsupportedModel(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.name === 'ValidationException' &&
    /doesn't support counting tokens/i.test(error.message)
  )
}

/**
 * The parts of a Converse request that CountTokens takes (not inferenceConfig), image
 * bytes decoded as the SDK wants them. Throws on malformed base64.
 */
function tokensInput(converse: ConverseRequest): ConverseTokensRequest {
  return {
    messages: converseSdkMessages(converse.messages),
    ...(converse.system ? { system: converse.system } : {}),
    ...(converse.toolConfig ? { toolConfig: converse.toolConfig } : {}),
  }
}

/**
 * The input tokens Bedrock's own tokenizer counts for `converse` on `modelId` (CountTokens:
 * the count Converse would bill for the same input), or null when it cannot say: the model
 * or region does not support CountTokens, the call fails or is aborted, the answer is not
 * a count. Never throws: the caller then falls back to its own estimate. One attempt, as
 * the client is built (`maxAttempts`); `signal` bounds its time.
 */
export async function countBedrockTokens(
  client: BedrockRuntimeClient,
  modelId: string,
  converse: ConverseRequest,
  signal?: AbortSignal,
): Promise<number | null> {
  if (signal?.aborted || unsupported.get(client)?.has(modelId)) return null
  try {
    const output = await client.send(
      new CountTokensCommand({ modelId, input: { converse: tokensInput(converse) } }),
      signal ? { abortSignal: signal } : {},
    )
    const count = output.inputTokens
    return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : null
  } catch (error) {
    if (isUnsupportedModel(error)) {
      const models = unsupported.get(client) ?? new Set<string>()
      models.add(modelId)
      unsupported.set(client, models)
    }
    return null
  }
}

/**
 * `converse` followed by the part of the answer the client received, as the assistant's
 * turn (added to the last message when that is already the assistant's, a prefill, so
 * roles keep alternating): counted by countBedrockTokens, it is the input plus the output
 * so far. Blank text adds nothing (Bedrock refuses a blank text block).
 */
export function withAnswerSoFar(converse: ConverseRequest, text: string): ConverseRequest {
  if (text.trim() === '') return converse
  const last = converse.messages.at(-1)
  const messages =
    last?.role === 'assistant'
      ? [...converse.messages.slice(0, -1), { ...last, content: [...last.content, { text }] }]
      : [...converse.messages, { role: 'assistant' as const, content: [{ text }] }]
  return { ...converse, messages }
}
