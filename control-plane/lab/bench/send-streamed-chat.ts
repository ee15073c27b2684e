import { type Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { reportedCachedTokens } from '../../../shared/openai/usage.ts'
import { kinferenceHeaders } from '../../../shared/protocol/kinference-headers.ts'
import { createChatStreamParser } from './create-chat-stream-parser.ts'

export interface StreamedChatTarget {
  url: URL
  agent: HttpAgent | HttpsAgent
  headers: Record<string, string>
  timeoutMs: number
  /** The benchmark's clock, in ms. */
  now: () => number
}

/** One streamed chat completion as the client saw it. */
export interface StreamedChatResult {
  startMs: number
  tokenTimesMs: number[]
  endMs: number
  /** The assistant text received. */
  text: string
  promptTokens: number
  /** usage.completion_tokens, else the number of token chunks. */
  outputTokens: number
  cachedTokens: number
  /** `pod=` of the router's x-kinference-decision header. */
  pod: string | null
  error: string | null
}

const maxErrorBody = 64 * 1024

/** The pod named by Kinference's `x-kinference-decision: pool=..; pod=..; ...` header. */
export function podOfDecision(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return null
  const match = /(?:^|;)\s*pod=([^;]*)/.exec(value)
  const pod = match?.[1]?.trim()
  return pod ? pod : null
}

/** The message of an OpenAI or vLLM error body, else the body's start. */
function errorMessage(status: number, body: string): string {
  let message = body.trim().slice(0, 300)
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string }
    const inner = typeof parsed.error === 'object' ? parsed.error?.message : parsed.error
    message = inner ?? parsed.message ?? message
  } catch {}
  return `HTTP ${status}${message ? `: ${message}` : ''}`
}

/**
 * POSTs a chat-completions body and reads the SSE answer: the start time just before the
 * request goes out (GuideLLM's request_start), each token's arrival (the time of the
 * network read that carried its chunk), the end at the end of the body. Never throws:
 * HTTP errors (status ≥ 400), network errors, broken streams, error events in the stream
 * and timeouts (whole request, `timeoutMs`) come back as `error`.
 */
export function sendStreamedChat(
  target: StreamedChatTarget,
  body: string,
): Promise<StreamedChatResult> {
  return new Promise((resolve) => {
    const parser = createChatStreamParser()
    const { state } = parser
    let pod: string | null = null
    let settled = false
    const startMs = target.now()
    const finish = (error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      const endMs = target.now()
      resolve({
        startMs,
        tokenTimesMs: state.tokenTimesMs,
        endMs,
        text: state.pieces.join(''),
        promptTokens: state.usage?.prompt_tokens ?? 0,
        outputTokens: state.usage?.completion_tokens ?? state.tokenTimesMs.length,
        cachedTokens: (state.usage && reportedCachedTokens(state.usage)) ?? 0,
        pod,
        error: error ?? state.error,
      })
    }
    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest
    const req = send(target.url, {
      method: 'POST',
      agent: target.agent,
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(body),
      },
    })
    const timer = setTimeout(() => {
      req.destroy()
      finish(`timed out after ${target.timeoutMs} ms`)
    }, target.timeoutMs)
    req.on('error', (error) => finish(error.message || String(error)))
    req.on('response', (res: IncomingMessage) => {
      pod = podOfDecision(res.headers[kinferenceHeaders.decision])
      const status = res.statusCode ?? 0
      res.setEncoding('utf8')
      res.on('error', (error) => finish(error.message || 'the response broke'))
      res.on('close', () => {
        if (!res.complete) finish('the connection closed before the response ended')
      })
      if (status >= 400) {
        let text = ''
        res.on('data', (chunk: string) => {
          if (text.length < maxErrorBody) text += chunk
        })
        res.on('end', () => finish(errorMessage(status, text)))
        return
      }
      res.on('data', (chunk: string) => parser.push(chunk, target.now()))
      res.on('end', () => {
        parser.end(target.now())
        const empty = !state.done && state.usage === null && state.tokenTimesMs.length === 0
        finish(empty ? `HTTP ${status} with no stream events` : null)
      })
    })
    req.end(body)
  })
}
