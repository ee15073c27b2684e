import {
  type Agent,
  type ClientRequest,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { sseErrorEnding } from '../../../shared/openai/sse-error-ending.ts'
import { upstreamErrorBody } from '../../../shared/openai/upstream-error-body.ts'
import { AnswerMeter, type MeteredAnswer } from './answer-meter.ts'

/**
 * Why nothing reached the client. Only `pod-down` and `pod-unavailable` say anything about
 * the pod: the others are this request's failure on a pod that otherwise answers.
 */
export type FailureCause =
  /** Connection refused, reset, timed out connecting, or cut before the answer's first byte. */
  | 'pod-down'
  /** The pod answered 502, 503 or 504: it says it cannot serve now. */
  | 'pod-unavailable'
  /** The pod answered another 5xx: this request failed there (vLLM's 500 is per request). */
  | 'pod-error'
  /** Connected, but no answer within the response timeout. */
  | 'timeout'

export type ProxyOutcome =
  /**
   * The pod's answer reached the client: a success byte for byte, or an error (any 4xx,
   * 501, and a 5xx on the last attempt) in OpenAI's shape.
   */
  | ({ kind: 'completed'; status: number } & MeteredAnswer)
  /** Nothing reached the client: safe to retry elsewhere when the cause allows. */
  | { kind: 'failed-before-bytes'; reason: string; cause: FailureCause }
  /** The stream broke after bytes were sent; the client got an error event. */
  | { kind: 'failed-after-bytes'; reason: string; generatedTokens: number }
  | { kind: 'client-gone' }

export interface ProxyRequest {
  podUrl: string
  /**
   * The engine of a data-parallel pod to run the request on (vLLM's X-data-parallel-rank);
   * null lets a pod of one engine, or vLLM's own balancer, take it.
   */
  dataParallelRank: number | null
  path: string
  body: Buffer
  /** Headers passed through to the pod (request id, trace context). */
  headers: Record<string, string>
  agent: Agent
  stream: boolean
  /** Added to the answer: which pod, why. */
  extraHeaders: Record<string, string>
  /** How long connecting may take (a pod that does not accept connections is down). */
  connectTimeoutMs: number
  /**
   * How long the answer's head may take once connected: a non-streamed answer's head comes
   * with its last token, so this bounds a whole generation, not the pod's health.
   */
  responseTimeoutMs: number
  /** No other pod will be tried: a 5xx goes to the client (OpenAI-shaped) as it is. */
  finalAttempt: boolean
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
/**
 * Where vLLM's OpenAI server reads the engine a request goes to (`_get_data_parallel_rank`,
 * vllm/entrypoints/openai/engine/serving.py; header names are case-insensitive).
 */
export const dataParallelRankHeader = 'x-data-parallel-rank'
/** vLLM's validation errors quote the request back: enough for any message, then cut. */
const maxErrorBody = 1024 * 1024

/**
 * Sends the client's body to a pod as is and streams the pod's answer back byte for byte,
 * watching it go by for the first token, the number of tokens and the usage block. An
 * error answer reaches the client in OpenAI's shape (upstream-error-body.ts), whatever the
 * pod said it in. Before the first byte a failure is reported with its cause so the caller
 * can retry on another pod; after it, the stream ends with an OpenAI-style error event,
 * never silently.
 */
export function proxyToPod(request: ProxyRequest, res: ServerResponse): Promise<ProxyOutcome> {
  return new Promise<ProxyOutcome>((resolve) => {
    let settled = false
    const settle = Object.assign(
      (outcome: ProxyOutcome) => {
        if (settled) return
        settled = true
        resolve(outcome)
      },
      { done: () => settled },
    )
    const target = new URL(request.path, request.podUrl)
    const upstream = httpRequest(target, {
      method: 'POST',
      agent: request.agent,
      headers: {
        ...request.headers,
        ...(request.dataParallelRank !== null && {
          [dataParallelRankHeader]: String(request.dataParallelRank),
        }),
        'content-type': 'application/json',
        'content-length': String(request.body.length),
      },
    })
    const timeouts = watchTimeouts(upstream, request)
    const onClientGone = () => {
      if (res.writableFinished) return
      upstream.destroy()
      settle({ kind: 'client-gone' })
    }
    res.once('close', onClientGone)

    upstream.once('error', (error) => {
      timeouts.clear()
      if (res.headersSent) return
      const cause = timeouts.timedOut() ? 'timeout' : 'pod-down'
      settle({ kind: 'failed-before-bytes', reason: error.message, cause })
    })
    upstream.once('response', (answer) => {
      timeouts.clear()
      const status = answer.statusCode ?? 502
      if (status >= 200 && status < 300) relayAnswer(answer, status, request, res, settle)
      else answerError(answer, status, request, res, settle)
    })
    upstream.end(request.body)
  })
}

/**
 * The connect timeout until the socket connects (a reused keep-alive socket already has),
 * then the response timeout until the answer's head: only the first says the pod is down.
 */
function watchTimeouts(upstream: ClientRequest, request: ProxyRequest) {
  let timedOut = false
  let timer = setTimeout(
    () => upstream.destroy(new Error('connect timeout')),
    request.connectTimeoutMs,
  )
  const connected = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timedOut = true
      upstream.destroy(new Error(`no answer within ${request.responseTimeoutMs} ms`))
    }, request.responseTimeoutMs)
  }
  upstream.once('socket', (socket) => {
    if (socket.connecting) socket.once('connect', connected)
    else connected()
  })
  return { clear: () => clearTimeout(timer), timedOut: () => timedOut }
}

/** Resolves the proxy's outcome (the first call wins); done once one has. */
type Settle = ((outcome: ProxyOutcome) => void) & { done(): boolean }

/** A 2xx answer, streamed to the client as it comes. */
function relayAnswer(
  answer: IncomingMessage,
  status: number,
  request: ProxyRequest,
  res: ServerResponse,
  settle: Settle,
): void {
  // The head goes out with the first byte of the body: a pod that dies before it (a
  // stream still in prefill) is retried elsewhere without the client seeing anything.
  const head = () => {
    if (!res.headersSent)
      res.writeHead(status, { ...passThrough(answer.headers), ...request.extraHeaders })
  }
  const meter = new AnswerMeter(
    request.stream,
    request.path === '/v1/embeddings' ? 'embeddings' : 'generation',
  )
  answer.on('data', (chunk: Buffer) => {
    const first = meter.add(chunk)
    if (first && request.stream && status === 200) request.onFirstToken()
    head()
    if (!res.write(chunk)) {
      answer.pause()
      res.once('drain', () => answer.resume())
    }
    if (request.stream) request.onProgress(meter.generatedTokens)
  })
  answer.once('end', () => {
    head()
    res.end()
    settle({ kind: 'completed', status, ...meter.ended() })
  })
  whenBroken(answer, (reason) => {
    if (settle.done()) return
    if (!res.headersSent) {
      settle({
        kind: 'failed-before-bytes',
        reason: `the pod failed before answering: ${reason}`,
        cause: 'pod-down',
      })
      return
    }
    if (request.stream) res.end(midStreamError(reason))
    else res.destroy()
    settle({ kind: 'failed-after-bytes', reason, generatedTokens: meter.generatedTokens })
  })
}

/**
 * Any other answer is an error. A 5xx (but 501, a feature the pods lack) is reported for a
 * retry unless this is the last attempt; the rest reach the client in OpenAI's shape, read
 * whole first (up to maxErrorBody). A pod's 401 or 403 refuses the scorer, not the client
 * (the edge checked the client's key): a 502 for the client.
 */
function answerError(
  answer: IncomingMessage,
  status: number,
  request: ProxyRequest,
  res: ServerResponse,
  settle: Settle,
): void {
  if (status >= 500 && status !== 501 && !request.finalAttempt) {
    answer.resume()
    const cause = status >= 502 && status <= 504 ? 'pod-unavailable' : 'pod-error'
    settle({ kind: 'failed-before-bytes', reason: `the pod answered ${status}`, cause })
    return
  }
  const kept: Buffer[] = []
  let keptSize = 0
  answer.on('data', (chunk: Buffer) => {
    if (keptSize >= maxErrorBody) return
    kept.push(chunk)
    keptSize += chunk.length
  })
  answer.once('end', () => {
    const text = Buffer.concat(kept).subarray(0, maxErrorBody).toString('utf8')
    const { status: clientStatus, body } = upstreamErrorBody(
      status === 401 || status === 403 ? 502 : status,
      text,
    )
    const headers = passThrough(answer.headers)
    for (const name of ['content-type', 'content-encoding']) delete headers[name]
    res.writeHead(clientStatus, {
      ...headers,
      'content-type': 'application/json',
      ...request.extraHeaders,
    })
    res.end(JSON.stringify(body))
    settle({
      kind: 'completed',
      status: clientStatus,
      usageSeen: false,
      cachedTokens: null,
      promptTokens: null,
      generatedTokens: 0,
    })
  })
  whenBroken(answer, (reason) =>
    settle({
      kind: 'failed-before-bytes',
      reason: `the pod failed before answering: ${reason}`,
      cause: 'pod-down',
    }),
  )
}

/** The answer stopped before its end: an error, or a connection cut (a killed pod) without one. */
function whenBroken(answer: IncomingMessage, broke: (reason: string) => void): void {
  let done = false
  const once = (reason: string) => {
    if (done) return
    done = true
    broke(reason)
  }
  answer.once('error', (error) => once(error.message))
  answer.once('close', () => {
    if (!answer.complete) once('the connection closed mid-answer')
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
