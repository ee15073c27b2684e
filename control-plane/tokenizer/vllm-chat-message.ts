import { z } from 'zod'

const contentError =
  'expected a string or an array of text parts ({"type": "text", "text": string}) or image parts'

/**
 * The client's own identifier of an image (vLLM's `uuid` of a content part): vLLM keys its
 * prefix cache on it instead of a hash of the image's data.
 */
const uuid = z.string().nullish()

/**
 * One part of a message's content: text, as vLLM reads it from "text", "input_text" and
 * "output_text" parts (their "text") and "refusal" parts (their "refusal"), a part whose
 * text is null skipped, as vLLM skips it; or an image, "image_url" ({"url"}) or
 * "input_image" (the URL itself), which only a model with an image processor takes (see
 * createImageExpander). Audio, video and embeddings are refused: their placeholders depend
 * on processors the router does not have.
 */
export const ChatContentPart = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('text'), text: z.string().nullable() }),
    z.object({ type: z.literal('input_text'), text: z.string().nullable() }),
    z.object({ type: z.literal('output_text'), text: z.string().nullable() }),
    z.object({ type: z.literal('refusal'), refusal: z.string().nullable() }),
    z.object({
      type: z.literal('image_url'),
      image_url: z.object({ url: z.string() }).nullish(),
      uuid,
    }),
    z.object({ type: z.literal('input_image'), image_url: z.string().nullish(), uuid }),
  ],
  {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? 'only text ("text", "input_text", "output_text", "refusal") and image ("image_url", "input_image") content parts can be tokenized'
        : contentError,
  },
)
export type ChatContentPart = z.infer<typeof ChatContentPart>

/** A message's content: a string, or parts (texts vLLM joins with "\n" for some templates). */
export const ChatContent = z.union([z.string(), z.array(ChatContentPart)], { error: contentError })
export type ChatContent = z.infer<typeof ChatContent>

/** An assistant tool call as OpenAI clients send it back: `arguments` is a JSON string. */
export const VllmToolCall = z.object({
  id: z.string().optional(),
  type: z.literal('function', { error: 'only "function" tool calls are supported' }).optional(),
  function: z.object({
    name: z.string(),
    arguments: z
      .union([z.string(), z.record(z.string(), z.unknown())], {
        error: 'tool call arguments must be a JSON string',
      })
      .nullish(),
  }),
})
export type VllmToolCall = z.infer<typeof VllmToolCall>

const common = {
  name: z.string().optional(),
  /** vLLM's field for the thinking of an earlier turn (`reasoning_content` is its old name). */
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
}

/**
 * A chat message of an OpenAI `/v1/chat/completions` request, as vLLM accepts it: the
 * OpenAI roles, and any other role string with the same fields (vLLM's custom message
 * param, e.g. Llama's "ipython"). Unknown keys (`refusal`, `annotations`, ... echoed back
 * from an earlier response) are dropped, as vLLM drops them. The tokenizer renders it as
 * vLLM would; the edge's looser check of the same JSON is shared/openai's ChatMessage.
 */
export const VllmChatMessage = z.object({
  role: z.string({ error: 'a message needs a string "role"' }),
  content: ChatContent.nullish(),
  tool_calls: z.array(VllmToolCall).nullish(),
  tool_call_id: z.string().optional(),
  tools: z.array(z.unknown()).nullish(),
  ...common,
})
export type VllmChatMessage = z.infer<typeof VllmChatMessage>
export type VllmChatMessageInput = z.input<typeof VllmChatMessage>
