import { z } from 'zod'
import { ChatCompletionRequest, CompletionRequest } from './chat-completion-request.ts'

/** The two generation APIs: /v1/chat/completions and /v1/completions. */
export const RequestKind = z.enum(['chat', 'completion'])
export type RequestKind = z.infer<typeof RequestKind>

/** A parsed OpenAI generation request, told apart by its API. */
export type OpenAiRequest =
  | { kind: 'chat'; body: ChatCompletionRequest }
  | { kind: 'completion'; body: CompletionRequest }

/** Why a body is not a request: every problem in words, and the field of the first one. */
export interface RequestIssues {
  message: string
  param: string | null
  /** Each problem on its own, its field as a dotted path ('' for the body itself). */
  each: { path: string; message: string }[]
}

/**
 * Parses a chat or completions body as vLLM accepts it (unknown fields kept). A body that
 * does not parse is a value, not an exception: each server answers it in its own words
 * (OpenAI's error at the edge and the scorer, vLLM's in the simulator).
 */
export function parseOpenAiRequest(
  kind: RequestKind,
  body: unknown,
): { request: OpenAiRequest } | { issues: RequestIssues } {
  const parsed =
    kind === 'chat' ? ChatCompletionRequest.safeParse(body) : CompletionRequest.safeParse(body)
  if (!parsed.success) return { issues: requestIssues(parsed.error.issues) }
  return {
    request:
      kind === 'chat'
        ? { kind, body: parsed.data as ChatCompletionRequest }
        : { kind, body: parsed.data as CompletionRequest },
  }
}

/**
 * zod's issues as a client reads them: each in words (`readIssue`, readableIssue unless
 * told), joined, and the field of the first one as OpenAI's `param`.
 */
export function requestIssues(
  issues: readonly z.core.$ZodIssue[],
  readIssue: (issue: z.core.$ZodIssue) => string = readableIssue,
): RequestIssues {
  const each = issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }))
  const first = each[0]?.path ?? ''
  return {
    message: issues.map(readIssue).join('; '),
    param: first === '' ? null : first,
    each,
  }
}

/**
 * The most tokens the client lets the answer have, or null when it sets no limit (vLLM
 * then stops at the model's context length). For chat, max_completion_tokens replaces the
 * deprecated max_tokens, as OpenAI and vLLM read them; completions have only max_tokens.
 */
export function maxTokensOf(request: OpenAiRequest): number | null {
  if (request.kind === 'chat')
    return request.body.max_completion_tokens ?? request.body.max_tokens ?? null
  return request.body.max_tokens ?? null
}

/** The field maxTokensOf read, for error messages. */
export function maxTokensField(request: OpenAiRequest): 'max_completion_tokens' | 'max_tokens' {
  return request.kind === 'chat' && request.body.max_completion_tokens != null
    ? 'max_completion_tokens'
    : 'max_tokens'
}

/**
 * One zod issue as a person reads it, e.g. "messages[0].content: Expected string, received
 * number": the field as it is written in JavaScript, zod's words without their "Invalid
 * input:" preamble (zod's own pretty form draws ✖ and → for a terminal, not a client).
 */
export function readableIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`,
    )
    .join('')
  const words =
    issue.code === 'invalid_union'
      ? unionWords(issue)
      : issue.message.replace(/^Invalid input:\s*/, '')
  const text = words.charAt(0).toUpperCase() + words.slice(1)
  return field === '' ? text : `${field}: ${text}`
}

/**
 * A value none of a union's types accepted: the types it would have taken ("Expected
 * string, array or null"), where zod says only "Invalid input".
 */
function unionWords(issue: z.core.$ZodIssueInvalidUnion): string {
  const expected = issue.errors.flatMap((branch) =>
    branch.flatMap((inner) =>
      inner.code === 'invalid_type' && inner.path.length === 0 ? [String(inner.expected)] : [],
    ),
  )
  const unique = [...new Set(expected)]
  if (unique.length === 0) return issue.message.replace(/^Invalid input:?\s*/, 'Invalid value')
  const last = unique.pop() as string
  return `Expected ${unique.length > 0 ? `${unique.join(', ')} or ${last}` : last}`
}
