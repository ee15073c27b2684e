import { z } from 'zod'
import { type ConverseContentBlock, JsonValue } from '../../../shared/bedrock/converse-request.ts'
import type { FakeTokensInput } from './fake-input-tokens.ts'
import { validateConverseBody } from './validate-converse-body.ts'

/**
 * CountTokens' body as the SDK writes it (POST /model/{modelId}/count-tokens): `input` is a
 * union, exactly one of `converse` (Converse's messages, system, toolConfig and
 * additionalModelRequestFields) or `invokeModel` (`body`, the InvokeModel body as base64,
 * as restJson writes a blob).
 */
const CountTokensBody = z.object({
  input: z.union([
    z.strictObject({ converse: z.record(z.string(), z.unknown()) }),
    z.strictObject({ invokeModel: z.strictObject({ body: z.base64() }) }),
  ]),
})

const AnthropicText = z.object({ type: z.literal('text'), text: z.string() })
/**
 * A block of the Anthropic Messages format as Converse blocks; other types (images,
 * documents) have no words here.
 */
const AnthropicBlock = z.union([
  AnthropicText.transform((b): ConverseContentBlock[] => [{ text: b.text }]),
  z
    .object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: JsonValue })
    .transform((b): ConverseContentBlock[] => [
      { toolUse: { toolUseId: b.id, name: b.name, input: b.input } },
    ]),
  z
    .object({
      type: z.literal('tool_result'),
      tool_use_id: z.string(),
      content: z.union([z.string(), z.array(z.object({ text: z.string().optional() }))]).optional(),
    })
    .transform((b): ConverseContentBlock[] => {
      const parts = typeof b.content === 'string' ? [{ text: b.content }] : (b.content ?? [])
      const content = parts.map((c) => ({ text: c.text ?? '' }))
      return [{ toolResult: { toolUseId: b.tool_use_id, content } }]
    }),
  z.object({ type: z.string() }).transform((): ConverseContentBlock[] => []),
])
/** The InvokeModel bodies counted: Anthropic Messages, or a bare `prompt` / `inputText`. */
const InvokeModelBody = z.union([
  z.object({
    system: z.union([z.string(), z.array(AnthropicText)]).optional(),
    messages: z
      .array(
        z.object({
          role: z.enum(['user', 'assistant']),
          content: z.union([z.string(), z.array(AnthropicBlock)]),
        }),
      )
      .min(1),
    tools: z
      .array(
        z.object({ name: z.string(), description: z.string().optional(), input_schema: JsonValue }),
      )
      .optional(),
  }),
  z.object({ prompt: z.string() }),
  z.object({ inputText: z.string() }),
])
type InvokeModelBody = z.infer<typeof InvokeModelBody>

const malformed = 'Malformed input request, please reformat your input and try again.'

/** An InvokeModel body as the texts the fake model would read, in Converse's shape. */
function invokeModelInput(body: InvokeModelBody): FakeTokensInput {
  if ('prompt' in body) return { messages: [{ role: 'user', content: [{ text: body.prompt }] }] }
  if ('inputText' in body) {
    return { messages: [{ role: 'user', content: [{ text: body.inputText }] }] }
  }
  const system = typeof body.system === 'string' ? [{ text: body.system }] : body.system
  return {
    messages: body.messages.map((m) => ({
      role: m.role,
      content: typeof m.content === 'string' ? [{ text: m.content }] : m.content.flat(),
    })),
    ...(system ? { system } : {}),
    ...(body.tools && body.tools.length > 0
      ? {
          toolConfig: {
            tools: body.tools.map((t) => ({
              toolSpec: {
                name: t.name,
                ...(t.description === undefined ? {} : { description: t.description }),
                inputSchema: { json: t.input_schema },
              },
            })),
          },
        }
      : {}),
  }
}

/**
 * A CountTokens body as what the model would read, or the message of the
 * ValidationException Bedrock answers. A `converse` input is checked as Converse checks its
 * body, so a request CountTokens counts is one Converse would take.
 */
export function parseCountTokensBody(body: unknown): FakeTokensInput | string {
  const parsed = CountTokensBody.safeParse(body)
  if (!parsed.success) return `Malformed input request: ${z.prettifyError(parsed.error)}`
  const { input } = parsed.data
  if ('converse' in input) {
    // Converse's own fields that CountTokens does not take are refused, not ignored.
    const extra = Object.keys(input.converse).find(
      (key) => !['messages', 'system', 'toolConfig', 'additionalModelRequestFields'].includes(key),
    )
    if (extra !== undefined)
      return `Malformed input request: input.converse.${extra} is not allowed`
    return validateConverseBody(input.converse)
  }
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(input.invokeModel.body, 'base64').toString('utf8'))
  } catch {
    return malformed
  }
  const invoke = InvokeModelBody.safeParse(json)
  return invoke.success ? invokeModelInput(invoke.data) : malformed
}
