import { z } from 'zod'

/** A text part of a multi-part message; other part types are carried but not read. */
export const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() })
export type ContentPart = z.infer<typeof ContentPart>

export const ChatMessage = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(ContentPart), z.null()]).optional(),
  name: z.string().optional(),
  tool_call_id: z.string().optional(),
  tool_calls: z.array(z.looseObject({})).nullish(),
})
export type ChatMessage = z.infer<typeof ChatMessage>

/**
 * A tool the model may call, as vLLM accepts it (function tools only, as its
 * ChatCompletionToolsParam): checked at the edge, so a malformed one is a 400 at once on
 * every backend instead of whatever each upstream makes of it.
 */
export const FunctionTool = z.looseObject({
  type: z.literal('function').default('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
})

export const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({
    type: z.literal('function'),
    function: z.looseObject({ name: z.string().min(1) }),
  }),
])

export const StreamOptions = z.looseObject({
  include_usage: z.boolean().nullish(),
  continuous_usage_stats: z.boolean().nullish(),
})

/**
 * Sampling and length fields shared by chat and completions, as vLLM accepts them.
 * Unknown fields pass through: vLLM ignores (and logs) fields it does not know, and
 * so must anything that stands in front of it.
 */
const generationFields = {
  model: z.string().min(1).optional(),
  max_tokens: z.int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: StreamOptions.nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  n: z.int().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  seed: z.int().nullish(),
  ignore_eos: z.boolean().nullish(),
  min_tokens: z.int().nullish(),
  cache_salt: z.string().nullish(),
  user: z.string().nullish(),
}

export const ChatCompletionRequest = z.looseObject({
  ...generationFields,
  messages: z.array(ChatMessage).min(1),
  max_completion_tokens: z.int().nullish(),
  /** vLLM's defaults: a new assistant turn is opened, the final message is not continued. */
  add_generation_prompt: z.boolean().default(true),
  continue_final_message: z.boolean().default(false),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  tools: z.array(FunctionTool).nullish(),
  tool_choice: ToolChoice.nullish(),
})
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>

export const CompletionRequest = z.looseObject({
  ...generationFields,
  prompt: z.union([z.string(), z.array(z.int().min(0))]),
  echo: z.boolean().nullish(),
})
export type CompletionRequest = z.infer<typeof CompletionRequest>
