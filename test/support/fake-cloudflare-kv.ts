import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * Cloudflare's Workers KV REST API, as much of it as the publisher uses, on 127.0.0.1:
 * PUT/GET `/client/v4/accounts/{account}/storage/kv/namespaces/{namespace}/values/{key}`
 * and GET `.../metadata/{key}`, with the v4 envelope and Cloudflare's error codes:
 *
 *   no Authorization header       400  9106  Missing X-Auth-Key, X-Auth-Email or Authorization headers
 *   not `Bearer <token>`          400  6003  Invalid request headers (chain: 6111)
 *   wrong token, other account    403  10000 Authentication error
 *   unknown namespace             404  10013 namespace not found
 *   unknown key                   404  10009 get: 'key not found'
 *   rate limited (failNext)       429  971   Please wait and consider throttling your request speed
 *   unknown path                  404  7000  No route for that URI
 *
 * Bad metadata (400) and injected 5xx bodies use codes of this fake's own choosing; the
 * publisher relies only on their status.
 */
export interface FakeCloudflareKv {
  /** Pass as the publisher's baseUrl. */
  baseUrl: string
  accountId: string
  namespaceId: string
  apiToken: string
  /** The namespace's pairs as written. */
  values: Map<string, { value: string; metadata: unknown }>
  /** Every request: method, path (with query) and whether it carried the right token. */
  requests: { method: string; path: string; authorized: boolean }[]
  /** The next `count` requests fail with `status` (429 and 5xx), before anything else. */
  failNext(count: number, fault: Fault): void
  close(): Promise<void>
}

export interface Fault {
  status: number
  retryAfterSeconds?: number
  /** An HTML page, as Cloudflare's edge sends for some 5xx, instead of the envelope. */
  html?: boolean
}

interface Answer {
  status: number
  body: string
  headers?: Record<string, string>
}

const hex = () => randomBytes(16).toString('hex')

export async function startFakeCloudflareKv(): Promise<FakeCloudflareKv> {
  const faults: Fault[] = []
  const fake: Omit<FakeCloudflareKv, 'baseUrl' | 'close'> = {
    accountId: hex(),
    namespaceId: hex(),
    apiToken: `cf-test-${hex()}`,
    values: new Map(),
    requests: [],
    failNext: (count, fault) => {
      for (let i = 0; i < count; i++) faults.push(fault)
    },
  }
  const server = createServer((req, res) => {
    void serve(req, fake, faults).then(
      (answer) => send(res, answer),
      (error: unknown) => send(res, failure(500, 10001, String(error))),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    ...fake,
    baseUrl: `http://127.0.0.1:${port}/client/v4`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function serve(
  req: IncomingMessage,
  fake: Omit<FakeCloudflareKv, 'baseUrl' | 'close'>,
  faults: Fault[],
): Promise<Answer> {
  const body = await readBody(req)
  const url = new URL(req.url ?? '/', 'http://fake')
  const authorization = req.headers.authorization
  fake.requests.push({
    method: req.method ?? '',
    path: `${url.pathname}${url.search}`,
    authorized: authorization === `Bearer ${fake.apiToken}`,
  })
  const fault = faults.shift()
  if (fault) return faultAnswer(fault)
  const denied = checkAuth(authorization, fake.apiToken)
  if (denied) return denied
  const route = url.pathname.match(
    /^\/client\/v4\/accounts\/([^/]+)\/storage\/kv\/namespaces\/([^/]+)\/(values|metadata)\/([^/]+)$/,
  )
  if (!route) return failure(404, 7000, 'No route for that URI')
  const [, account, namespace, kind, rawKey] = route as unknown as string[]
  if (account !== fake.accountId) return failure(403, 10000, 'Authentication error')
  if (namespace !== fake.namespaceId) return failure(404, 10013, 'namespace not found')
  const key = decodeURIComponent(rawKey ?? '')
  if (kind === 'values' && req.method === 'PUT') return put(req, body, key, fake.values)
  if (req.method !== 'GET') return failure(404, 7000, 'No route for that URI')
  const stored = fake.values.get(key)
  if (!stored) return failure(404, 10009, "get: 'key not found'")
  if (kind === 'metadata') return envelope(stored.metadata)
  return {
    status: 200,
    body: stored.value,
    headers: { 'content-type': 'application/octet-stream' },
  }
}

function checkAuth(authorization: string | undefined, token: string): Answer | null {
  if (authorization === undefined)
    return failure(400, 9106, 'Missing X-Auth-Key, X-Auth-Email or Authorization headers')
  if (!/^Bearer \S+$/.test(authorization))
    return {
      status: 400,
      body: JSON.stringify({
        success: false,
        errors: [
          {
            code: 6003,
            message: 'Invalid request headers',
            error_chain: [{ code: 6111, message: 'Invalid format for Authorization header' }],
          },
        ],
        messages: [],
        result: null,
      }),
    }
  return authorization === `Bearer ${token}` ? null : failure(403, 10000, 'Authentication error')
}

/** Multipart (`value`, optional `metadata` JSON) or a raw body; either replaces all. */
async function put(
  req: IncomingMessage,
  body: Buffer,
  key: string,
  values: FakeCloudflareKv['values'],
): Promise<Answer> {
  const type = req.headers['content-type'] ?? ''
  if (!type.startsWith('multipart/form-data')) {
    values.set(key, { value: body.toString('utf8'), metadata: null })
    return envelope({})
  }
  const form = await new Response(body, { headers: { 'content-type': type } }).formData()
  const value = form.get('value')
  if (value === null) return failure(400, 10001, 'missing value in form')
  const text = typeof value === 'string' ? value : await value.text()
  const metadataField = form.get('metadata')
  let metadata: unknown = null
  if (typeof metadataField === 'string') {
    try {
      metadata = JSON.parse(metadataField)
    } catch {
      return failure(400, 10001, 'metadata must be valid JSON')
    }
  }
  values.set(key, { value: text, metadata })
  return envelope({})
}

function faultAnswer(fault: Fault): Answer {
  const headers: Record<string, string> = {}
  if (fault.retryAfterSeconds !== undefined)
    headers['retry-after'] = String(fault.retryAfterSeconds)
  if (fault.html) {
    headers['content-type'] = 'text/html'
    return { status: fault.status, body: '<html><body>error</body></html>', headers }
  }
  const answer =
    fault.status === 429
      ? failure(429, 971, 'Please wait and consider throttling your request speed')
      : failure(fault.status, 10001, 'Internal error (injected)')
  return { ...answer, headers }
}

function envelope(result: unknown): Answer {
  return {
    status: 200,
    body: JSON.stringify({ success: true, errors: [], messages: [], result }),
  }
}

function failure(status: number, code: number, message: string): Answer {
  return {
    status,
    body: JSON.stringify({
      success: false,
      errors: [{ code, message }],
      messages: [],
      result: null,
    }),
  }
}

function send(res: ServerResponse, answer: Answer) {
  res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
  res.end(answer.body)
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
