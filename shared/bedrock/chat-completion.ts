import { z } from 'zod'
import { CompleteUsage } from '../openai/usage.ts'

/**
 * OpenAI's chat completion response and stream chunk, the shapes a Bedrock reply is
 * translated into (what the official client reads).
 */
export const FinishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter'])
export type FinishReason = z.infer<typeof FinishReason>

/** The usage of a translated answer: every count present. */
export const ChatUsage = CompleteUsage
export type ChatUsage = CompleteUsage

export const ChatToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
})
export type ChatToolCall = z.infer<typeof ChatToolCall>

export const ChatCompletion = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.int(),
      message: z.object({
        role: z.literal('assistant'),
        content: z.string().nullable(),
        tool_calls: z.array(ChatToolCall).optional(),
        /** Reasoning text, where the model gave it (the vLLM / DeepSeek field name). */
        reasoning_content: z.string().optional(),
      }),
      logprobs: z.null(),
      finish_reason: FinishReason,
    }),
  ),
  usage: ChatUsage,
})
export type ChatCompletion = z.infer<typeof ChatCompletion>

export const ChatToolCallDelta = z.object({
  index: z.int().min(0),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().optional(), arguments: z.string() }),
})
export type ChatToolCallDelta = z.infer<typeof ChatToolCallDelta>

export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.int(),
      delta: z.object({
        role: z.literal('assistant').optional(),
        content: z.string().optional(),
        reasoning_content: z.string().optional(),
        tool_calls: z.array(ChatToolCallDelta).optional(),
      }),
      logprobs: z.null(),
      finish_reason: FinishReason.nullable(),
    }),
  ),
  /** Only with stream_options.include_usage: null on every chunk but the last, as OpenAI does. */
  usage: ChatUsage.nullable().optional(),
})
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunk>
