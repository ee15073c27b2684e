import { z } from 'zod'
import { promptOf } from './generation-request.ts'
import type { SimModel } from './model/create-sim-model.ts'
import { badRequest, samplingError, VllmError, validationError } from './vllm-error.ts'

const TokenIds = z.array(z.int().min(0))

/**
 * vLLM's EmbeddingCompletionRequest / EmbeddingChatRequest, the fields the simulator
 * reads (docs/vllm-wire.md, "Embeddings"); other fields pass as vLLM's models allow them.
 */
const EmbeddingBody = z.looseObject({
  model: z.string().nullish(),
  input: z.union([z.string(), z.array(z.string()), TokenIds, z.array(TokenIds)]).optional(),
  messages: z.array(z.unknown()).optional(),
  encoding_format: z.enum(['float', 'base64']).default('float'),
  embed_dtype: z.literal('float32').default('float32'),
  endianness: z.enum(['native', 'little', 'big']).default('native'),
  dimensions: z.int().nullish(),
  truncate_prompt_tokens: z.int().min(-1).nullish(),
  truncation_side: z.enum(['left', 'right']).nullish(),
  add_special_tokens: z.boolean().optional(),
})

export interface EmbeddingRequest {
  /** Each input's prompt token ids, in order (one for a chat request). */
  prompts: number[][]
  encodingFormat: 'float' | 'base64'
  endianness: 'little' | 'big'
}

export interface EmbeddingLimits {
  /** The name the request is served as (for the matryoshka error). */
  modelName: string
  maxModelLen: number
}

/**
 * Validates and tokenizes an embeddings request as vLLM's pooling server does: pydantic
 * first (a "Bad Request" listing the fields), then PoolingParams (`dimensions` on a model
 * without matryoshka support), then each prompt's truncation and length.
 */
export function parseEmbeddingRequest(
  body: unknown,
  model: SimModel,
  limits: EmbeddingLimits,
): EmbeddingRequest {
  const parsed = EmbeddingBody.safeParse(body)
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({
      loc: issue.path.map(String),
      msg: issue.message,
    }))
    throw validationError(errors, errors[0]?.loc[0] ?? null)
  }
  const request = parsed.data
  if (request.input === undefined && request.messages === undefined) {
    // Neither member of vLLM's EmbeddingRequest union validates.
    throw validationError(
      [
        { loc: ['EmbeddingCompletionRequest', 'input'], msg: 'Field required', type: 'missing' },
        { loc: ['EmbeddingChatRequest', 'messages'], msg: 'Field required', type: 'missing' },
      ],
      'EmbeddingCompletionRequest',
    )
  }
  if (request.dimensions !== null && request.dimensions !== undefined) {
    // PoolingParams._set_default_parameters: the simulated model is not matryoshka.
    throw badRequest(
      `Model "${limits.modelName}" does not support matryoshka representation, changing output dimensions will lead to poor results.`,
    )
  }
  const prompts = promptsOf(request, body, model).map((ids) =>
    truncated(ids, request.truncate_prompt_tokens ?? null, request.truncation_side, limits),
  )
  for (const ids of prompts) checkLength(ids.length, limits.maxModelLen)
  return {
    prompts,
    encodingFormat: request.encoding_format,
    endianness: request.endianness === 'big' ? 'big' : 'little',
  }
}

function promptsOf(
  request: z.infer<typeof EmbeddingBody>,
  body: unknown,
  model: SimModel,
): number[][] {
  const { input } = request
  if (input === undefined) {
    // EmbeddingChatRequest: the chat template without the generation prompt by default.
    const chat = { ...(body as object), add_generation_prompt: false }
    const flag = (body as { add_generation_prompt?: unknown }).add_generation_prompt
    if (typeof flag === 'boolean') chat.add_generation_prompt = flag
    return [promptOf('chat', chat, model).tokenIds]
  }
  const special = request.add_special_tokens ?? true
  const items: (string | number[])[] =
    typeof input === 'string'
      ? [input]
      : input.length > 0 && input.every((item) => typeof item === 'number')
        ? [input as number[]]
        : (input as (string | number[])[])
  if (items.length === 0) throw badRequest('Input cannot be empty.', 'input')
  return items.map((item) => {
    if (typeof item === 'string') return model.encode(item, { addSpecialTokens: special })
    const outside = item.find((id) => id >= model.vocabSize)
    if (outside !== undefined) throw badRequest(`Token id ${outside} is out of vocabulary`, 'input')
    return item
  })
}

/**
 * truncate_prompt_tokens: -1 keeps max_model_len tokens, k keeps k, from the left (the
 * last k tokens) unless truncation_side says right; more than max_model_len is refused.
 */
function truncated(
  ids: number[],
  truncate: number | null,
  side: 'left' | 'right' | null | undefined,
  limits: EmbeddingLimits,
): number[] {
  if (truncate === null) return ids
  const keep = truncate === -1 ? limits.maxModelLen : truncate
  if (keep > limits.maxModelLen) {
    throw samplingError(
      `truncate_prompt_tokens value (${keep}) is greater than max_model_len (${limits.maxModelLen}). Please request a smaller truncation size.`,
      'truncate_prompt_tokens',
      String(keep),
    )
  }
  if (ids.length <= keep) return ids
  return side === 'right' ? ids.slice(0, keep) : ids.slice(ids.length - keep)
}

/** A pooling request has no output tokens: the prompt may fill max_model_len. */
function checkLength(inputTokens: number, maxModelLen: number): void {
  if (inputTokens === 0) throw badRequest('The prompt cannot be empty.', 'input')
  if (inputTokens > maxModelLen) {
    throw new VllmError(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${inputTokens} input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=${inputTokens})`,
      'input_tokens',
    )
  }
}
