import { KinfError } from '../errors/kinf-error.ts'
import { errorCodeOfStatus, type OpenAiErrorBody, openAiErrorBody } from './openai-error-body.ts'

/** An upstream's error answer as the client gets it: a status OpenAI uses, OpenAI's body. */
export interface UpstreamErrorAnswer {
  status: number
  body: OpenAiErrorBody
}

/** What an error body said, whatever its shape. */
interface Said {
  message: string | null
  param: string | null
  code: string | null
}

const maxMessageChars = 1_000
const maxParamChars = 200
/** OpenAI's codes are short snake_case words (model_not_found); vLLM's is the status, a number. */
const openAiCode = /^[a-z][a-z0-9_]{0,63}$/
/** Where a message turns into a stack trace (Python's, or a JavaScript one). */
const traceStart = [
  /Traceback \(most recent call last\)/,
  /^\s*File "[^"\n]*", line \d+/m,
  /^\s+at \S.*:\d+:\d+\)?$/m,
]

/**
 * Turns an upstream's error answer (its status and body text) into OpenAI's error shape,
 * so that a client sees the same error whichever backend produced it (docs/vllm-wire.md §4.1).
 * Read: vLLM's `{"error":{message,type,param,code:int}}`, its older flat
 * `{"object":"error",message,type,param,code}`, `{"error":"…"}` (its --api-key guard),
 * `{"detail":"…"}` (FastAPI's own answers), and any other body (an HTML 502 from a proxy, a
 * bare 431) for its status alone. The type is OpenAI's for the status; the message and
 * param are kept (the message cut before any stack trace and capped), except that a server
 * error's message (5xx but 501, which names a feature the server lacks) says only that it
 * failed: vLLM's 500 is the text of whatever exception it met, internals included. `code`
 * is OpenAI's word when the upstream gave one or the message tells it, else the status's.
 * A status outside 400–599 answers 502. The caller bounds the text it reads.
 */
export function upstreamErrorBody(status: number, text: string): UpstreamErrorAnswer {
  const clientStatus = Number.isInteger(status) && status >= 400 && status <= 599 ? status : 502
  const said = whatItSaid(text)
  const message = messageOf(clientStatus, said.message)
  const code = said.code ?? codeOfMessage(clientStatus, said.param, message)
  const error = new KinfError(errorCodeOfStatus(clientStatus), message, {
    status: clientStatus,
    param: said.param,
    ...(code !== null && { openAiCode: code }),
  })
  return { status: clientStatus, body: openAiErrorBody(error) }
}

function whatItSaid(text: string): Said {
  const json = parseObject(text)
  if (json === null) return { message: null, param: null, code: null }
  // {"error":{…}}, or the flat shape whose fields sit at the top.
  const inner = isObject(json.error) ? json.error : json
  const param = stringOf(inner.param)
  const code = stringOf(inner.code)
  return {
    message: stringOf(inner.message) ?? stringOf(json.error) ?? stringOf(json.detail),
    param: param === null ? null : param.slice(0, maxParamChars),
    code: code !== null && openAiCode.test(code) ? code : null,
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  const trimmed = text.trim()
  if (!trimmed.startsWith('{')) return null
  try {
    const value: unknown = JSON.parse(trimmed)
    return isObject(value) ? value : null
  } catch {
    return null
  }
}

function messageOf(status: number, said: string | null): string {
  if (status >= 500 && status !== 501)
    return `the model server failed to serve the request (HTTP ${status})`
  const clean = said === null ? '' : withoutTrace(said)
  if (clean === '') return `the model server refused the request (HTTP ${status})`
  return clean.length > maxMessageChars ? `${clean.slice(0, maxMessageChars)}…` : clean
}

function withoutTrace(message: string): string {
  let end = message.length
  for (const pattern of traceStart) {
    const at = message.search(pattern)
    if (at >= 0 && at < end) end = at
  }
  return message.slice(0, end).trim()
}

/** The codes OpenAI (and Kinference's own refusals) give two errors vLLM words its own way. */
function codeOfMessage(status: number, param: string | null, message: string): string | null {
  if (status === 404 && (param === 'model' || /model .* does not exist/i.test(message)))
    return 'model_not_found'
  if (status === 400 && /maximum context length/i.test(message)) return 'context_length_exceeded'
  return null
}

function stringOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
