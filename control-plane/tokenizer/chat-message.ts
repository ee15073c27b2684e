import { z } from 'zod'

const contentError = 'expected a string or an array of {"type": "text", "text": string} parts'

/** One part of a message's content. Qwen3 is text-only, so only text parts are accepted. */
export const ChatTextPart = z.object(
  {
    type: z.literal('text', { error: 'only "text" content parts are supported' }),
    text: z.string({ error: 'a text part needs a string "text"' }),
  },
  { error: contentError },
)
export type ChatTextPart = z.infer<typeof ChatTextPart>

/** A message's content: a string, or text parts that vLLM joins with "\n". */
export const ChatContent = z.union([z.string(), z.array(ChatTextPart)], { error: contentError })
export type ChatContent = z.infer<typeof ChatContent>

/** An assistant tool call as OpenAI clients send it back: `arguments` is a JSON string. */
export const ChatToolCall = z.object({
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.object({
    name: z.string(),
    arguments: z.string({ error: 'tool call arguments must be a JSON string' }),
  }),
})
export type ChatToolCall = z.infer<typeof ChatToolCall>

const name = z.string().optional()

/**
 * A chat message of an OpenAI `/v1/chat/completions` request, as vLLM accepts it for a
 * text-only model. Unknown keys (`refusal`, `annotations`, ... echoed back from an earlier
 * response) are dropped, as vLLM drops them. `reasoning` is vLLM's field for the thinking
 * of an earlier turn; it reaches the template as `reasoning_content`.
 */
export const ChatMessage = z.discriminatedUnion(
  'role',
  [
    z.object({ role: z.literal('system'), content: ChatContent, name }),
    // vLLM accepts OpenAI's developer role and passes it on; Qwen3's template renders nothing for it.
    z.object({ role: z.literal('developer'), content: ChatContent, name }),
    z.object({ role: z.literal('user'), content: ChatContent, name }),
    z.object({
      role: z.literal('assistant'),
      content: ChatContent.nullish(),
      name,
      tool_calls: z.array(ChatToolCall).nullish(),
      reasoning: z.string().nullish(),
    }),
    z.object({
      role: z.literal('tool'),
      content: ChatContent,
      tool_call_id: z.string().optional(),
      name,
    }),
  ],
  { error: 'unknown role, expected one of "system", "developer", "user", "assistant", "tool"' },
)
export type ChatMessage = z.infer<typeof ChatMessage>
export type ChatMessageInput = z.input<typeof ChatMessage>
