import { z } from 'zod'

function positive(value: unknown): boolean {
  return typeof value === 'number' && value > 0
}

function nonEmpty(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0
}

/**
 * The OpenAI chat fields Bedrock's Converse cannot honour, when a request sets them: the
 * one place that knows (to-converse-request.ts refuses them; the edge keeps such a request
 * off Bedrock unless the policy's burst action names them in dropFields,
 * workers/app/serve-decision.ts). Each is refused rather than silently ignored: a request
 * must mean the same on the pods and on Bedrock (docs/edge-keys-and-errors.md §2.4).
 */
const unhonoured = [
  {
    field: 'n',
    present: (v: unknown) => typeof v === 'number' && v > 1,
    why: 'Bedrock returns one choice',
  },
  {
    field: 'logprobs',
    present: (v: unknown) => v === true,
    why: 'Bedrock returns no log probabilities',
  },
  {
    field: 'top_logprobs',
    present: (v: unknown) => typeof v === 'number' && v > 0,
    why: 'Bedrock returns no log probabilities',
  },
  { field: 'seed', present: (v: unknown) => v != null, why: 'Bedrock takes no seed' },
  {
    field: 'response_format',
    present: (v: unknown) =>
      typeof v === 'object' && v !== null && (v as { type?: unknown }).type !== 'text',
    why: 'JSON modes are not mapped; describe the format in the prompt or use a tool',
  },
  {
    field: 'reasoning_effort',
    present: (v: unknown) => v != null,
    why: 'Converse takes no reasoning effort',
  },
  {
    // Converse lets the model call several tools in one turn, as OpenAI's default (true) does.
    field: 'parallel_tool_calls',
    present: (v: unknown) => v === false,
    why: 'Converse cannot hold the model to one tool call per turn',
  },
  {
    field: 'presence_penalty',
    present: (v: unknown) => typeof v === 'number' && v !== 0,
    why: 'Converse has no penalties',
  },
  {
    field: 'frequency_penalty',
    present: (v: unknown) => typeof v === 'number' && v !== 0,
    why: 'Converse has no penalties',
  },
  {
    field: 'logit_bias',
    present: (v: unknown) => typeof v === 'object' && v !== null && Object.keys(v).length > 0,
    why: 'Converse has no logit bias',
  },
  { field: 'functions', present: (v: unknown) => v != null, why: 'use tools instead' },
  { field: 'function_call', present: (v: unknown) => v != null, why: 'use tool_choice instead' },
  { field: 'audio', present: (v: unknown) => v != null, why: 'no audio output' },
  { field: 'prediction', present: (v: unknown) => v != null, why: 'no predicted outputs' },
  // vLLM's own sampling options: the pods honour them, Converse has no equivalent.
  { field: 'ignore_eos', present: (v: unknown) => v === true, why: 'a vLLM option' },
  { field: 'min_tokens', present: positive, why: 'a vLLM option' },
  { field: 'top_k', present: positive, why: 'a vLLM option' },
  { field: 'min_p', present: positive, why: 'a vLLM option' },
  {
    field: 'repetition_penalty',
    present: (v: unknown) => typeof v === 'number' && v !== 1,
    why: 'a vLLM option',
  },
  { field: 'use_beam_search', present: (v: unknown) => v === true, why: 'a vLLM option' },
  { field: 'prompt_logprobs', present: (v: unknown) => v != null, why: 'a vLLM option' },
  { field: 'stop_token_ids', present: nonEmpty, why: 'a vLLM option' },
  { field: 'allowed_token_ids', present: nonEmpty, why: 'a vLLM option' },
  { field: 'bad_words', present: nonEmpty, why: 'a vLLM option' },
  { field: 'structured_outputs', present: (v: unknown) => v != null, why: 'a vLLM option' },
  { field: 'guided_json', present: (v: unknown) => v != null, why: 'a vLLM option' },
  { field: 'guided_regex', present: (v: unknown) => v != null, why: 'a vLLM option' },
  { field: 'guided_choice', present: (v: unknown) => v != null, why: 'a vLLM option' },
  { field: 'guided_grammar', present: (v: unknown) => v != null, why: 'a vLLM option' },
] as const

/** A field Converse cannot honour: what a burst action's dropFields may name. */
export const ConverseUnhonouredField = z.enum(
  unhonoured.map((entry) => entry.field) as [
    (typeof unhonoured)[number]['field'],
    ...(typeof unhonoured)[number]['field'][],
  ],
)
export type ConverseUnhonouredField = z.infer<typeof ConverseUnhonouredField>

/** A field the request sets that Converse cannot honour, and why. */
export interface UnhonouredField {
  field: ConverseUnhonouredField
  why: string
}

/** The fields of a chat request Converse cannot honour, in a fixed order; [] when none. */
export function converseUnhonoured(body: Readonly<Record<string, unknown>>): UnhonouredField[] {
  return unhonoured.flatMap(({ field, present, why }) =>
    present(body[field]) ? [{ field, why }] : [],
  )
}

/** The body without `fields` (the ones a policy lets a burst drop). */
export function withoutFields<Body extends Record<string, unknown>>(
  body: Body,
  fields: readonly string[],
): Body {
  if (!fields.some((field) => field in body)) return body
  const copy: Record<string, unknown> = { ...body }
  for (const field of fields) delete copy[field]
  return copy as Body
}
