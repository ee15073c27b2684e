import { z } from 'zod'

/**
 * The Bedrock Converse request as it travels in JSON (POST /model/{modelId}/converse and
 * /converse-stream), the subset Kinference writes and the fake server reads. Image bytes
 * are base64 here, as on the wire; the SDK wants them decoded, which the worker does.
 */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue }
export const JsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(JsonValue),
    z.record(z.string(), JsonValue),
  ]),
)

export const ConverseImageFormat = z.enum(['png', 'jpeg', 'gif', 'webp'])
export type ConverseImageFormat = z.infer<typeof ConverseImageFormat>

export const ConverseToolUse = z.object({
  toolUseId: z.string().min(1),
  name: z.string().min(1),
  input: JsonValue,
})
export type ConverseToolUse = z.infer<typeof ConverseToolUse>

export const ConverseToolResult = z.object({
  toolUseId: z.string().min(1),
  content: z.array(z.union([z.object({ text: z.string() }), z.object({ json: JsonValue })])),
  status: z.enum(['success', 'error']).optional(),
})
export type ConverseToolResult = z.infer<typeof ConverseToolResult>

export const ConverseCachePoint = z.object({ type: z.literal('default') })

export const ConverseContentBlock = z.union([
  z.object({ text: z.string() }),
  z.object({
    image: z.object({ format: ConverseImageFormat, source: z.object({ bytes: z.base64() }) }),
  }),
  z.object({ toolUse: ConverseToolUse }),
  z.object({ toolResult: ConverseToolResult }),
  z.object({ cachePoint: ConverseCachePoint }),
])
export type ConverseContentBlock = z.infer<typeof ConverseContentBlock>

export const ConverseMessage = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.array(ConverseContentBlock),
})
export type ConverseMessage = z.infer<typeof ConverseMessage>

export const ConverseSystemBlock = z.union([
  z.object({ text: z.string() }),
  z.object({ cachePoint: ConverseCachePoint }),
])
export type ConverseSystemBlock = z.infer<typeof ConverseSystemBlock>

export const ConverseToolChoice = z.union([
  z.object({ auto: z.object({}) }),
  z.object({ any: z.object({}) }),
  z.object({ tool: z.object({ name: z.string().min(1) }) }),
])
export type ConverseToolChoice = z.infer<typeof ConverseToolChoice>

export const ConverseToolConfig = z.object({
  tools: z
    .array(
      z.object({
        toolSpec: z.object({
          name: z.string().min(1),
          description: z.string().optional(),
          inputSchema: z.object({ json: JsonValue }),
        }),
      }),
    )
    .min(1),
  toolChoice: ConverseToolChoice.optional(),
})
export type ConverseToolConfig = z.infer<typeof ConverseToolConfig>

export const ConverseInferenceConfig = z.object({
  maxTokens: z.int().positive().optional(),
  temperature: z.number().optional(),
  topP: z.number().optional(),
  stopSequences: z.array(z.string()).optional(),
})
export type ConverseInferenceConfig = z.infer<typeof ConverseInferenceConfig>

/** The body; `modelId` travels in the path, so it is not part of it. */
export const ConverseRequest = z.object({
  messages: z.array(ConverseMessage),
  system: z.array(ConverseSystemBlock).optional(),
  inferenceConfig: ConverseInferenceConfig.optional(),
  toolConfig: ConverseToolConfig.optional(),
})
export type ConverseRequest = z.infer<typeof ConverseRequest>
