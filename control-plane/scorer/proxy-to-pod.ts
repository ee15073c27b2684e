import {
  type Agent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type ServerResponse,
} from 'node:http'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { sseErrorEnding } from '../../shared/openai/sse-error-ending.ts'
import { reportedCachedTokens, type Usage, usageOfJson } from '../../shared/openai/usage.ts'

export type ProxyOutcome =
  /** The pod answered (any status below 500) and the answer reached the client. */
  | {
      kind: 'completed'
      status: number
      /** Usage seen: cachedTokens null when absent (see the caller for what absence means). */
      usageSeen: boolean
      cachedTokens: number | null
      generatedTokens: number
    }
  /** Nothing reached the client: connection refused, reset, or a 5xx. Safe to retry elsewhere. */
  | { kind: 'failed-before-bytes'; reason: string }
  /** The stream broke after bytes were sent; the client got an error event. */
  | { kind: 'failed-after-bytes'; reason: string; generatedTokens: number }
  | { kind: 'client-gone' }

export interface ProxyRequest {
  podUrl: string
  path: string
  body: Buffer
  /** Headers passed through to the pod (request id, trace context). */
  headers: Record<string, string>
  agent: Agent
  stream: boolean
  /** Added to the answer: which pod, why. */
  extraHeaders: Record<string, string>
  connectTimeoutMs: number
  onFirstToken: () => void
  onProgress: (generatedTokens: number) => void
}

const hopByHop = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'proxy-connection',
  'upgrade',
])
const maxBufferedBody = 4 * 1024 * 1024
const tailBytes = 4096

/**
 * Sends the client's body to a pod as is and streams the pod's answer back byte for byte,
 * watching it go by for the first token, the number of tokens and the usage block. Before
 * the first byte a failure is reported so the caller can retry on another pod; after it,
 * the stream ends with an OpenAI-style error event, never silently.
 */
export function proxyToPod(request: ProxyRequest, res: ServerResponse): Promise<ProxyOutcome> {
  return new Promise<ProxyOutcome>((resolve) => {
    let settled = false
    const settle = (outcome: ProxyOutcome) => {
      if (settled) return
      settled = true
      resolve(outcome)
    }
    const target = new URL(request.path, request.podUrl)
    const upstream = httpRequest(target, {
      method: 'POST',
      agent: request.agent,
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        'content-length': String(request.body.length),
      },
    })
    const connectTimer = setTimeout(
      () => upstream.destroy(new Error('connect timeout')),
      request.connectTimeoutMs,
    )
    const onClientGone = () => {
      if (res.writableFinished) return
      upstream.destroy()
      settle({ kind: 'client-gone' })
    }
    res.once('close', onClientGone)

    upstream.once('error', (error) => {
      clearTimeout(connectTimer)
      if (!res.headersSent) settle({ kind: 'failed-before-bytes', reason: error.message })
    })
    upstream.once('response', (answer) => {
      clearTimeout(connectTimer)
      const status = answer.statusCode ?? 502
      if (status >= 500) {
        answer.resume()
        settle({ kind: 'failed-before-bytes', reason: `pod answered ${status}` })
        return
      }
      // The head goes out with the first byte of the body: a pod that dies before it (a
      // stream still in prefill) is retried elsewhere without the client seeing anything.
      const head = () => {
        if (!res.headersSent)
          res.writeHead(status, { ...passThrough(answer.headers), ...request.extraHeaders })
      }
      let first = true
      let generated = 0
      // The last chunks (streams: enough for the usage event) or the whole body (JSON).
      const kept: Buffer[] = []
      let keptSize = 0
      answer.on('data', (chunk: Buffer) => {
        if (first && request.stream && status === 200) request.onFirstToken()
        first = false
        head()
        if (!res.write(chunk)) {
          answer.pause()
          res.once('drain', () => answer.resume())
        }
        if (request.stream) {
          generated += countTokenEvents(chunk)
          request.onProgress(generated)
          kept.push(chunk)
          keptSize += chunk.length
          while (kept.length > 1 && keptSize - (kept[0] as Buffer).length >= tailBytes)
            keptSize -= (kept.shift() as Buffer).length
        } else if (keptSize < maxBufferedBody) {
          kept.push(chunk)
          keptSize += chunk.length
        }
      })
      answer.once('end', () => {
        head()
        res.end()
        const all = Buffer.concat(kept)
        const usage = request.stream
          ? usageFromStream(all.toString('utf8').slice(-tailBytes))
          : usageOfJson(all.toString('utf8'))
        settle({
          kind: 'completed',
          status,
          usageSeen: usage?.completion_tokens !== undefined,
          cachedTokens: usage ? reportedCachedTokens(usage) : null,
          generatedTokens: usage?.completion_tokens ?? generated,
        })
      })
      const broke = (reason: string) => {
        if (settled) return
        if (!res.headersSent) {
          settle({
            kind: 'failed-before-bytes',
            reason: `the pod failed before answering: ${reason}`,
          })
          return
        }
        if (request.stream) res.end(midStreamError(reason))
        else res.destroy()
        settle({ kind: 'failed-after-bytes', reason, generatedTokens: generated })
      }
      answer.once('error', (error) => broke(error.message))
      // A connection cut (the pod killed) may close the answer without 'end' or 'error'.
      answer.once('close', () => {
        if (!answer.complete) broke('the connection closed mid-answer')
      })
    })
    upstream.end(request.body)
  })
}

/** How a stream the pod broke off ends. */
function midStreamError(reason: string): string {
  return sseErrorEnding(new KinfError('upstream_error', `the pod failed mid-stream: ${reason}`))
}

function passThrough(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !hopByHop.has(name)) out[name] = value
  }
  return out
}

const contentMarker = Buffer.from('"content":"')
const textMarker = Buffer.from('"text":"')
const quote = 0x22

/** SSE events carrying generated text (the role chunk and the usage chunk carry none). */
function countTokenEvents(chunk: Buffer): number {
  let count = 0
  for (let at = chunk.indexOf(contentMarker); at >= 0; at = chunk.indexOf(contentMarker, at + 1)) {
    if (chunk[at + contentMarker.length] !== quote) count++
  }
  for (let at = chunk.indexOf(textMarker); at >= 0; at = chunk.indexOf(textMarker, at + 1)) count++
  return count
}

/** The last usage block in the tail of an SSE stream (vLLM sends it after the last token). */
function usageFromStream(tail: string): Usage | null {
  const events = tail.split('\n\n')
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]?.trim() ?? ''
    if (!event.startsWith('data: {')) continue
    const usage = usageOfJson(event.slice(6))
    if (usage) return usage
  }
  return null
}
