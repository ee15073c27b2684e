import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../shared/openai/chat-completion-request.ts'
import { type BlockKeyChain, computeBlockKeys } from '../../shared/routing/block-keys.ts'
import type { RoutingRequest } from '../../shared/routing/routing-strategy.ts'
import type { PoolRuntime } from './pool-runtime.ts'

export type RequestKind = 'chat' | 'completion'

/** A request ready to route: its pool, its token ids and block keys as the pod will see them. */
export interface PreparedRequest {
  kind: RequestKind
  pool: PoolRuntime
  model: string
  keys: BlockKeyChain
  routing: RoutingRequest
  stream: boolean
}

/** An error with the `param` and `code` of OpenAI's error body. */
export class RequestError extends KinfError {
  constructor(
    code: 'invalid_request' | 'not_found',
    message: string,
    param: string | null,
    openAiCode: string,
  ) {
    super(code, message, { param, openAiCode })
  }
}

/**
 * Parses a chat or completions body, finds the pool serving its model, and tokenizes it
 * exactly as that pool's pods will (chat template included). The tokenizer caches the
 * text between special tokens, so a long shared system prompt is tokenized once.
 */
export function prepareRequest(
  id: string,
  kind: RequestKind,
  body: unknown,
  pools: readonly PoolRuntime[],
): PreparedRequest {
  const parsed = (kind === 'chat' ? ChatCompletionRequest : CompletionRequest).safeParse(body)
  if (!parsed.success)
    throw new RequestError(
      'invalid_request',
      z.prettifyError(parsed.error),
      null,
      'invalid_request',
    )
  const request = parsed.data
  const model = request.model ?? soleModel(pools)
  const match = pools
    .map((pool) => ({ pool, served: pool.serves(model) }))
    .find((m) => m.served !== null)
  if (!match?.served) {
    throw new RequestError(
      'not_found',
      `The model \`${model}\` does not exist.`,
      'model',
      'model_not_found',
    )
  }
  const { pool, served } = match
  let tokenIds: number[]
  try {
    tokenIds =
      kind === 'chat'
        ? served.tokenizer.applyChatTemplate((request as ChatCompletionRequest).messages as never, {
            addGenerationPrompt: (request as ChatCompletionRequest).add_generation_prompt ?? true,
            chatTemplateKwargs: (request as ChatCompletionRequest).chat_template_kwargs ?? {},
          }).tokenIds
        : completionTokens((request as CompletionRequest).prompt, served.tokenizer.encode)
  } catch (error) {
    if (error instanceof RequestError) throw error
    throw new RequestError(
      'invalid_request',
      (error as Error).message,
      kind === 'chat' ? 'messages' : 'prompt',
      'invalid_request',
    )
  }
  if (tokenIds.length >= served.maxContextTokens) {
    throw new RequestError(
      'invalid_request',
      `This model's maximum context length is ${served.maxContextTokens} tokens; the prompt has ${tokenIds.length}.`,
      'messages',
      'context_length_exceeded',
    )
  }
  const blockSize = pool.spec.blockSize
  const loraName = model === served.baseModel ? null : model
  const keys = computeBlockKeys(tokenIds, blockSize, {
    model: served.baseModel,
    loraName,
    cacheSalt: request.cache_salt ?? null,
  })
  const promptText =
    kind === 'chat'
      ? JSON.stringify((request as ChatCompletionRequest).messages)
      : String((request as CompletionRequest).prompt)
  return {
    kind,
    pool,
    model,
    keys,
    stream: request.stream === true,
    routing: {
      id,
      model,
      promptTokens: tokenIds.length,
      blockSize,
      promptText,
      maxTokens: (request as { max_tokens?: number | null }).max_tokens ?? 256,
    },
  }
}

function completionTokens(prompt: string | number[], encode: (text: string) => number[]): number[] {
  return typeof prompt === 'string' ? encode(prompt) : prompt
}

function soleModel(pools: readonly PoolRuntime[]): string {
  const models = pools.flatMap((pool) => pool.spec.models.map((m) => m.name))
  if (models.length === 1) return models[0] as string
  throw new RequestError(
    'invalid_request',
    'model is required: this scorer serves several models',
    'model',
    'invalid_request',
  )
}
