import { Agent, type RequestListener } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ProxyOutcome,
  type ProxyRequest,
  proxyToPod,
} from '../../../../control-plane/scorer/serving/proxy-to-pod.ts'
import { startLocalHttpServer } from '../../../support/local-http-server.ts'

// The proxy between the scorer and one pod, against small HTTP servers standing in for pods
// that misbehave in one way each (the simulator's own errors go through scorer-pod-errors).

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function listen(handler: RequestListener): Promise<string> {
  const server = await startLocalHttpServer(handler)
  cleanups.push(() => server.close())
  return server.url
}

/** A pod that answers `status` and `body` after `delayMs` (never, when null). */
function pod(status: number, body: string, delayMs: number | null = 0): Promise<string> {
  return listen((req, res) => {
    req.resume()
    if (delayMs === null) return
    setTimeout(() => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(body)
    }, delayMs)
  })
}

/** Proxies one request from a client to `podUrl`: what the client got, and the outcome. */
async function proxied(podUrl: string, options: Partial<ProxyRequest> = {}) {
  const agent = new Agent({ keepAlive: true })
  cleanups.push(() => agent.destroy())
  let outcome: ProxyOutcome | undefined
  const front = await listen(async (req, res) => {
    req.resume()
    outcome = await proxyToPod(
      {
        podUrl,
        dataParallelRank: null,
        path: '/v1/chat/completions',
        body: Buffer.from('{"messages":[{"role":"user","content":"hi"}]}'),
        headers: {},
        agent,
        stream: false,
        extraHeaders: { 'x-kinference-decision': 'pod=p' },
        connectTimeoutMs: 200,
        responseTimeoutMs: 60_000,
        finalAttempt: false,
        onFirstToken: () => {},
        onProgress: () => {},
        ...options,
      },
      res,
    )
    if (!res.headersSent) res.writeHead(599).end(outcome.kind)
  })
  const response = await fetch(front, { method: 'POST', body: '{}' })
  return {
    status: response.status,
    headers: response.headers,
    text: await response.text(),
    outcome,
  }
}

describe('the proxy to a pod', () => {
  it('names the engine of a data-parallel pod in vLLM’s X-data-parallel-rank, and none otherwise', async () => {
    const seen: (string | undefined)[] = []
    const target = await listen((req, res) => {
      req.resume()
      seen.push(req.headersDistinct['x-data-parallel-rank']?.join('|'))
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}')
    })
    expect((await proxied(target, { dataParallelRank: 3 })).status).toBe(200)
    expect((await proxied(target, { dataParallelRank: 0 })).status).toBe(200)
    expect((await proxied(target)).status).toBe(200)
    // A rank among the passed-through headers never reaches the pod beside the scorer's.
    await proxied(target, { dataParallelRank: 1, headers: { 'X-Data-Parallel-Rank': '7' } })
    expect(seen).toEqual(['3', '0', undefined, '1'])
  })

  it('waits past the connect timeout for a non-streamed answer that takes long to come', async () => {
    const slow = await pod(
      200,
      '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}',
      600,
    )
    const answer = await proxied(slow, { connectTimeoutMs: 100 })
    expect(answer.status).toBe(200)
    expect(answer.outcome).toMatchObject({ kind: 'completed', status: 200, generatedTokens: 2 })
  })

  it('reports an answer that never comes as a timeout of the request, not a pod down', async () => {
    const silent = await pod(200, '', null)
    const answer = await proxied(silent, { responseTimeoutMs: 150 })
    expect(answer.outcome).toMatchObject({ kind: 'failed-before-bytes', cause: 'timeout' })
  })

  it('reports a pod that refuses connections as down', async () => {
    const gone = await listen(() => {})
    await cleanups.pop()?.()
    const answer = await proxied(gone)
    expect(answer.outcome).toMatchObject({ kind: 'failed-before-bytes', cause: 'pod-down' })
  })

  it('reports a 5xx for a retry, unavailable or an error of this request', async () => {
    const vllm500 =
      '{"error":{"message":"boom","type":"InternalServerError","param":null,"code":500}}'
    expect((await proxied(await pod(503, ''))).outcome).toMatchObject({
      kind: 'failed-before-bytes',
      cause: 'pod-unavailable',
    })
    expect((await proxied(await pod(500, vllm500))).outcome).toMatchObject({
      kind: 'failed-before-bytes',
      cause: 'pod-error',
    })
    const last = await proxied(await pod(500, vllm500), { finalAttempt: true })
    expect(last.status).toBe(500)
    expect(JSON.parse(last.text)).toEqual({
      error: {
        message: 'the model server failed to serve the request (HTTP 500)',
        type: 'server_error',
        param: null,
        code: 'upstream_error',
      },
    })
  })

  it('answers a pod’s 4xx in OpenAI’s shape, with the decision headers', async () => {
    const vllm400 =
      '{"error":{"message":"top_p must be in (0, 1], got 1.5. (parameter=top_p, value=1.5)","type":"BadRequestError","param":"top_p","code":400}}'
    const answer = await proxied(await pod(400, vllm400))
    expect(answer.status).toBe(400)
    expect(answer.headers.get('x-kinference-decision')).toBe('pod=p')
    expect(answer.headers.get('content-type')).toBe('application/json')
    expect(JSON.parse(answer.text)).toEqual({
      error: {
        message: 'top_p must be in (0, 1], got 1.5. (parameter=top_p, value=1.5)',
        type: 'invalid_request_error',
        param: 'top_p',
        code: 'invalid_request',
      },
    })
    expect(answer.outcome).toMatchObject({ kind: 'completed', status: 400 })
  })

  it('answers a pod’s 401 as a 502: the pod refused the scorer, not the client', async () => {
    const answer = await proxied(await pod(401, '{"error":"Unauthorized"}'))
    expect(answer.status).toBe(502)
    expect(JSON.parse(answer.text).error.type).toBe('server_error')
  })
})
