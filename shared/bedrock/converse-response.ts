import { z } from 'zod'
import { JsonValue } from './converse-request.ts'

/**
 * What Converse answers, as far as Kinference reads it. Loose: Bedrock adds fields
 * (metrics, trace, padding) and block types over time, and those must not break a reply.
 */
export const ConverseUsage = z.looseObject({
  inputTokens: z.int().min(0),
  outputTokens: z.int().min(0),
  totalTokens: z.int().min(0).optional(),
  cacheReadInputTokens: z.int().min(0).nullish(),
  cacheWriteInputTokens: z.int().min(0).nullish(),
})
export type ConverseUsage = z.infer<typeof ConverseUsage>

/** Known values end_turn, tool_use, max_tokens, stop_sequence, guardrail_intervened, content_filtered, malformed_model_output, malformed_tool_use, model_context_window_exceeded; newer ones may come. */
export const ConverseStopReason = z.string().min(1)
export type ConverseStopReason = z.infer<typeof ConverseStopReason>

export const ConverseOutputBlock = z.looseObject({
  text: z.string().optional(),
  toolUse: z
    .looseObject({ toolUseId: z.string(), name: z.string(), input: JsonValue.optional() })
    .optional(),
  reasoningContent: z
    .looseObject({ reasoningText: z.looseObject({ text: z.string() }).optional() })
    .optional(),
})
export type ConverseOutputBlock = z.infer<typeof ConverseOutputBlock>

export const ConverseResponse = z.looseObject({
  output: z.looseObject({
    message: z.looseObject({
      role: z.literal('assistant'),
      content: z.array(ConverseOutputBlock),
    }),
  }),
  stopReason: ConverseStopReason,
  usage: ConverseUsage,
  metrics: z.looseObject({ latencyMs: z.number() }).optional(),
})
export type ConverseResponse = z.infer<typeof ConverseResponse>
