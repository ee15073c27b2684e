import { z } from 'zod'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import {
  ChatCompletionRequest,
  CompletionRequest,
} from '../../shared/openai/chat-completion-request.ts'
import type { PoolRequest } from '../../shared/pool/pool-router.ts'
import type { PoolRuntime } from './pool-runtime.ts'

export type RequestKind = 'chat' | 'completion'

/** A request ready to route: its pool, and its token ids and block keys as the pod will see them. */
export interface PreparedRequest {
  kind: RequestKind
  pool: PoolRuntime
  model: string
  request: PoolRequest
  stream: boolean
}

function invalid(message: string, param: string | null, openAiCode = 'invalid_request'): KinfError {
  return new KinfError('invalid_request', message, { param, openAiCode })
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
  if (!parsed.success) throw invalid(z.prettifyError(parsed.error), null)
  const request = parsed.data
  const model = request.model ?? soleModel(pools)
  const match = pools
    .map((pool) => ({ pool, served: pool.serves(model) }))
    .find((m) => m.served !== null)
  if (!match?.served) {
    throw new KinfError('not_found', `The model \`${model}\` does not exist.`, {
      param: 'model',
      openAiCode: 'model_not_found',
    })
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
    if (KinfError.isInstance(error) && error.param !== null) throw error
    throw invalid((error as Error).message, kind === 'chat' ? 'messages' : 'prompt')
  }
  if (tokenIds.length >= served.model.maxContextTokens) {
    throw invalid(
      `This model's maximum context length is ${served.model.maxContextTokens} tokens; the prompt has ${tokenIds.length}.`,
      'messages',
      'context_length_exceeded',
    )
  }
  const prepared = pool.router.prepare({
    id,
    model,
    promptIds: tokenIds,
    maxTokens: (request as { max_tokens?: number | null }).max_tokens ?? 256,
    cacheSalt: request.cache_salt ?? null,
    promptText: () =>
      kind === 'chat'
        ? JSON.stringify((request as ChatCompletionRequest).messages)
        : String((request as CompletionRequest).prompt),
  })
  return { kind, pool, model, request: prepared, stream: request.stream === true }
}

function completionTokens(prompt: string | number[], encode: (text: string) => number[]): number[] {
  return typeof prompt === 'string' ? encode(prompt) : prompt
}

function soleModel(pools: readonly PoolRuntime[]): string {
  const models = pools.flatMap((pool) => pool.spec.models.map((m) => m.name))
  if (models.length === 1) return models[0] as string
  throw invalid('model is required: this scorer serves several models', 'model')
}
