import { z } from 'zod'
import { ConverseStopReason, ConverseUsage } from './converse-response.ts'

/**
 * One member of Converse's ConverseStreamOutput union, as the SDK yields it and as the
 * payload of an event-stream message whose `:event-type` is the member's name. All members
 * optional: an unknown or future member is skipped, not fatal. The in-stream exceptions
 * (throttlingException, modelStreamErrorException, ...) never appear here: the SDK throws them.
 */
export const ConverseStreamEvent = z.looseObject({
  messageStart: z.looseObject({ role: z.string() }).optional(),
  contentBlockStart: z
    .looseObject({
      contentBlockIndex: z.int().min(0),
      start: z
        .looseObject({
          toolUse: z.looseObject({ toolUseId: z.string(), name: z.string() }).optional(),
        })
        .optional(),
    })
    .optional(),
  contentBlockDelta: z
    .looseObject({
      contentBlockIndex: z.int().min(0),
      delta: z.looseObject({
        text: z.string().optional(),
        toolUse: z.looseObject({ input: z.string() }).optional(),
        reasoningContent: z.looseObject({ text: z.string().optional() }).optional(),
      }),
    })
    .optional(),
  contentBlockStop: z.looseObject({ contentBlockIndex: z.int().min(0) }).optional(),
  messageStop: z.looseObject({ stopReason: ConverseStopReason }).optional(),
  metadata: z
    .looseObject({
      usage: ConverseUsage,
      metrics: z.looseObject({ latencyMs: z.number() }).optional(),
    })
    .optional(),
})
export type ConverseStreamEvent = z.infer<typeof ConverseStreamEvent>
