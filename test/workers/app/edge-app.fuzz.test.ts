import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { verifyEdgeRequest } from '../../../shared/auth/edge-signature.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { decidedHeader, promptTokensHeader } from '../../../shared/scorer-api/route-protocol.ts'
import { createEdgeApp } from '../../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../../workers/app/external-providers.ts'
import { createScorerClient } from '../../../workers/app/scorer-client.ts'
import { useDemoEdgeFixture } from '../../support/demo-edge-fixture.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../support/fuzz-runs.ts'

const runs = 2_000
const signingSecret = 'edge-fuzz-signing-secret-0123456789'
const demo = useDemoEdgeFixture()

/** How the scorer behind the edge answers this case: served, a decision, an error, or gone. */
type ScorerBehaviour =
  | { kind: 'serve' }
  | { kind: 'reject'; status: number }
  | { kind: 'error'; status: number }
  | { kind: 'garbage'; decided: boolean; body: string }
  | { kind: 'unreachable' }
  | { kind: 'stream'; events: string[]; pieces: number; breaks: boolean }

const completion = (model: unknown, stream: boolean) => {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
  if (!stream)
    return new Response(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model,
        choices: [
          { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
        ],
        usage,
      }),
      { headers: { 'content-type': 'application/json', [promptTokensHeader]: '3' } },
    )
  const chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', model, choices: [], usage }
  return new Response(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`, {
    headers: { 'content-type': 'text/event-stream' },
  })
}

/**
 * The scorer as the edge reaches it: every call must carry a valid signature (checked with
 * the scorer's own verifier); it then answers as `behaviour` says.
 */
function scorerStandIn(behaviour: ScorerBehaviour, unsigned: string[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init)
    const body = new Uint8Array(await request.arrayBuffer())
    const verified = await verifyEdgeRequest(
      [signingSecret],
      {
        method: request.method,
        path: new URL(request.url).pathname,
        body,
        headers: (name) => request.headers.get(name) ?? undefined,
      },
      Date.now() / 1000,
    )
    if (!verified.ok) unsigned.push(verified.reason)
    if (behaviour.kind === 'unreachable') throw new TypeError('fetch failed')
    if (behaviour.kind === 'stream') return sseAnswer(behaviour)
    if (behaviour.kind === 'garbage')
      return new Response(behaviour.body, {
        headers: behaviour.decided ? { [decidedHeader]: '1' } : {},
      })
    if (behaviour.kind === 'error')
      return Response.json(
        { error: { message: 'scorer says no', type: 'server_error', param: null, code: 'x' } },
        { status: behaviour.status },
      )
    if (behaviour.kind === 'reject')
      return Response.json(
        {
          decision: {
            kind: 'reject',
            policy: 'demo/demo',
            rule: 'r',
            status: behaviour.status,
            code: 'rejected_by_policy',
            message: 'no',
            trace: [],
          },
          from: 0,
          notes: [],
          promptTokens: 3,
        },
        { headers: { [decidedHeader]: '1' } },
      )
    const text = new TextDecoder().decode(body)
    const client = JSON.parse(text.slice(text.indexOf('\n') + 1)) as {
      model?: unknown
      stream?: unknown
    }
    return completion(client.model, client.stream === true)
  }
}

/**
 * A pod's SSE answer as the scorer relays it, cut into `pieces` chunks anywhere (inside an
 * event, inside a UTF-8 sequence), and broken off mid-stream when `breaks`.
 */
function sseAnswer({
  events,
  pieces,
  breaks,
}: {
  events: string[]
  pieces: number
  breaks: boolean
}) {
  const bytes = new TextEncoder().encode(events.join(''))
  const size = Math.max(1, Math.ceil(bytes.length / pieces))
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) {
        if (breaks) controller.error(new TypeError('terminated'))
        else controller.close()
        return
      }
      controller.enqueue(bytes.subarray(at, at + size))
      at += size
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
}
const usageValue = fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, 2 ** 53, 1e308, '3', null))
/** One SSE event of a chat stream: chunks, usage chunks with odd counts, [DONE], noise. */
const sseEvent = fc.oneof(
  fc
    .record({ content: fc.string({ maxLength: 8 }) })
    .map(
      ({ content }) =>
        `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}}}]}\n\n`,
    ),
  fc
    .record({ prompt_tokens: usageValue, completion_tokens: usageValue, total_tokens: usageValue })
    .map(
      (usage) =>
        `data: {"object":"chat.completion.chunk","choices":[],"usage":${JSON.stringify(usage)}}\n\n`,
    ),
  fc.constantFrom(
    'data: [DONE]\n\n',
    'data:[DONE]\n\n',
    ': keep-alive\n\n',
    'data: {"usage": {\n\n',
    'data: {"usage":{"total_tokens":1}}\r\n\r\n',
    'event: error\ndata: {}\n\n',
    '\n\n\n',
    'data: é💥\n\n',
  ),
  fc.string({ maxLength: 12 }),
)
const scorerBehaviour: fc.Arbitrary<ScorerBehaviour> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'serve' as const }) },
  fc.record({
    kind: fc.constant('reject' as const),
    status: fc.constantFrom(400, 401, 403, 404, 413, 429, 503, 500, 418, 200, 99, 600),
  }),
  fc.record({
    kind: fc.constant('error' as const),
    status: fc.constantFrom(400, 429, 500, 502, 503),
  }),
  fc.record({
    kind: fc.constant('garbage' as const),
    decided: fc.boolean(),
    body: fc.oneof(fc.string({ maxLength: 40 }), fc.json({ maxDepth: 2 })),
  }),
  fc.constant({ kind: 'unreachable' as const }),
  fc.record({
    kind: fc.constant('stream' as const),
    events: fc.array(sseEvent, { maxLength: 6 }),
    pieces: fc.integer({ min: 1, max: 12 }),
    breaks: fc.boolean(),
  }),
)

interface Case {
  method: string
  path: string
  headers: [string, string][]
  body: string | Uint8Array | null
  scorer: ScorerBehaviour
}

/** One request through the real edge app; what it answered, and what went wrong around it. */
async function edgeAnswers(input: Case) {
  const logs: string[] = []
  const unsigned: string[] = []
  const app = createEdgeApp({
    config: async () => demo.snapshot,
    quotas: createMemoryQuotaStore(),
    scorer: createScorerClient({
      urls: ['http://scorer.invalid'],
      signingSecret,
      nowSeconds: () => Date.now() / 1000,
      fetch: scorerStandIn(input.scorer, unsigned),
    }),
    external: createExternalProviders({
      credentials: () => ({ accessKeyId: 'AKIATESTTESTTEST0000', secretAccessKey: 'test' }),
    }),
    metrics: createEdgeMetrics(),
    nowMs: () => Date.now(),
    sleep: async () => {},
    newRequestId: () => 'req-fuzz',
    log: (line) => logs.push(line),
  })
  let request: Request
  try {
    request = new Request(`http://edge${input.path}`, {
      method: input.method,
      headers: input.headers,
      ...(input.body === null || input.method === 'GET' || input.method === 'HEAD'
        ? {}
        : { body: input.body }),
    })
  } catch {
    return null // a request no runtime can deliver (a header value outside Latin-1, ...)
  }
  const response = await app.fetch(request)
  return { response, text: await response.text(), logs, unsigned }
}

/**
 * The property: an answer, never a throw; a success, or an OpenAI-shaped error that is not
 * a 500 internal; nothing logged as an internal error; every scorer call signed.
 */
async function answersCleanly(input: Case): Promise<void> {
  const answered = await edgeAnswers(input)
  if (answered === null) return
  const { response, text, logs, unsigned } = answered
  expect(unsigned).toEqual([])
  expect(logs.filter((line) => line.startsWith('internal error'))).toEqual([])
  if (response.ok) {
    const type = response.headers.get('content-type') ?? ''
    if (type.includes('text/event-stream')) {
      // Events pass through as the pod wrote them; those that are JSON errors (the edge's
      // own when the stream broke) must be in OpenAI's shape.
      for (const event of text.split('\n\n').filter((e) => e.startsWith('data: {'))) {
        let data: { error?: unknown }
        try {
          data = JSON.parse(event.slice(6)) as { error?: unknown }
        } catch {
          expect(input.scorer.kind).toBe('stream')
          continue
        }
        if (data.error !== undefined) expectOpenAiError(data)
      }
      // A stream broken off before its [DONE] ends with the edge's word that it broke (when
      // the scorer's stream is the one served: not a Bedrock model's, which never asks it).
      const { scorer } = input
      const external = (response.headers.get('x-kinference-decision') ?? '').includes(
        'locality=External',
      )
      if (
        !external &&
        scorer.kind === 'stream' &&
        scorer.breaks &&
        !scorer.events.some((e) => e.includes('DONE'))
      )
        expect(text).toContain('the answer stopped upstream')
    } else if (type.includes('json') && input.method !== 'HEAD' && input.scorer.kind !== 'garbage')
      // A served answer goes through as the pod wrote it: only a well-behaved one is JSON.
      expect(() => JSON.parse(text)).not.toThrow()
    return
  }
  expect(response.status).toBeGreaterThanOrEqual(400)
  expect(response.status).toBeLessThan(600)
  if (input.method === 'HEAD') return
  const body = expectOpenAiError(JSON.parse(text))
  expect(response.status === 500 && body.error.code === 'internal', text).toBe(false)
}

function expectOpenAiError(body: unknown) {
  const error = (body as { error?: Record<string, unknown> }).error
  expect(error).toBeDefined()
  expect(typeof error?.message).toBe('string')
  expect(String(error?.message).length).toBeGreaterThan(0)
  expect(typeof error?.type).toBe('string')
  expect(error?.param === null || typeof error?.param === 'string').toBe(true)
  expect(error?.code === null || typeof error?.code === 'string').toBe(true)
  return body as { error: { code: string | null } }
}

const odd = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
  fc.constantFrom(
    '',
    '\u0000',
    '\uD800',
    '\uFFFF',
    '🦀'.repeat(50),
    'x'.repeat(70_000),
    '4111 1111 1111 1111',
    'a@b.co',
    '<|im_start|>',
  ),
)
const hugeNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.5, 1e-320, Number.MAX_SAFE_INTEGER, -1, 0),
  fc.integer(),
)
/** Mostly what a client sends, now and then something hostile: so most cases get far. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: hostile })
const models = mostly(
  fc.constantFrom('qwen3.8-27b-fp8', 'qwen3-8b', 'auto', 'gpt-4o', 'claude-sonnet'),
  fc.oneof(fc.constantFrom('batch', '*', 'QWEN3-8B', ' auto'), odd),
)
const chatMessage = fc.oneof(
  fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'developer'), content: odd }),
  fc.record({
    role: fc.constant('user'),
    content: fc.array(
      fc.record({ type: mostly(fc.constant('text'), fc.constant('image_url')), text: odd }),
      { maxLength: 3 },
    ),
  }),
  fc.record({
    role: fc.constant('assistant'),
    content: fc.constant(null),
    tool_calls: fc.array(
      fc.record({
        id: odd,
        type: fc.constant('function'),
        function: fc.record({ name: odd, arguments: fc.oneof(odd, fc.json({ maxDepth: 2 })) }),
      }),
      { maxLength: 2 },
    ),
  }),
  fc.record({ role: fc.constant('tool'), content: odd, tool_call_id: odd }),
)
const tool = fc.record({
  type: fc.constant('function'),
  function: fc.record(
    {
      name: mostly(fc.stringMatching(/^[a-z_]{1,12}$/), odd),
      description: odd,
      parameters: mostly(
        fc.constant({ type: 'object', properties: { a: { type: 'string' } } }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    },
    { requiredKeys: ['name'] },
  ),
})
/** A chat body a client could send, every field optional. */
const chatBody = fc.record(
  {
    model: models,
    messages: fc.array(chatMessage, { minLength: 1, maxLength: 4 }),
    max_tokens: mostly(fc.integer({ min: 1, max: 64 }), hugeNumber),
    max_completion_tokens: mostly(fc.integer({ min: 1, max: 64 }), hugeNumber),
    stream: fc.boolean(),
    stream_options: fc.record({ include_usage: fc.boolean() }),
    temperature: mostly(fc.double({ min: 0, max: 2, noNaN: true }), hugeNumber),
    n: mostly(fc.constant(1), fc.integer({ min: -1, max: 3 })),
    stop: mostly(
      fc.array(fc.string({ maxLength: 4 }), { maxLength: 4 }),
      fc.oneof(odd, fc.array(odd, { maxLength: 5 })),
    ),
    tools: fc.array(tool, { maxLength: 2 }),
    tool_choice: fc.oneof(
      fc.constantFrom('auto', 'none', 'required'),
      fc.record({ type: fc.constant('function'), function: fc.record({ name: odd }) }),
    ),
    user: odd,
    chat_template_kwargs: fc.dictionary(
      fc.constantFrom('enable_thinking', 'tools', 'x'),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  },
  { requiredKeys: ['model', 'messages'] },
)
const completionBody = fc.record(
  {
    model: models,
    prompt: mostly(
      fc.oneof(odd, fc.array(odd, { minLength: 1, maxLength: 3 })),
      fc.oneof(
        fc.array(fc.integer({ min: -1, max: 200_000 }), { maxLength: 8 }),
        fc.array(fc.array(fc.nat(), { maxLength: 4 }), { maxLength: 2 }),
      ),
    ),
    max_tokens: mostly(fc.integer({ min: 1, max: 64 }), hugeNumber),
    stream: fc.boolean(),
    echo: fc.boolean(),
    suffix: odd,
  },
  { requiredKeys: ['model', 'prompt'] },
)
/** An embeddings body a client could send: texts, token ids, the demo's embedding model or another. */
const embeddingBody = fc.record(
  {
    model: fc.oneof(fc.constant('qwen3-embedding-0.6b'), models),
    input: mostly(
      fc.oneof(odd, fc.array(odd, { minLength: 1, maxLength: 3 })),
      fc.oneof(
        fc.array(fc.integer({ min: -1, max: 200_000 }), { maxLength: 8 }),
        fc.array(fc.array(fc.nat(), { maxLength: 4 }), { maxLength: 3 }),
      ),
    ),
    encoding_format: fc.constantFrom('float', 'base64', 'int8', ''),
    dimensions: mostly(fc.integer({ min: 1, max: 64 }), hugeNumber),
    user: odd,
    priority: fc.integer({ min: -5, max: 5 }),
  },
  { requiredKeys: ['model', 'input'] },
)
/** A near-valid body with one field (top level or deeper) replaced by a value of any type. */
const mutatedBody = (valid: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(
      valid,
      fc.constantFrom(
        'model',
        'messages',
        'prompt',
        'max_tokens',
        'stream',
        'stream_options',
        'tools',
        'tool_choice',
        'n',
        'stop',
        'messages.0',
        'messages.0.role',
        'input',
        'input.0',
        'messages.0.content',
        'tools.0.function',
        '__proto__',
        'constructor',
      ),
      fc.oneof(fc.anything({ maxDepth: 3 }), hugeNumber, odd),
    )
    .map(([body, path, value]) => {
      const copy = structuredClone(body) as Record<string, unknown>
      const keys = path.split('.')
      let at: Record<string, unknown> = copy
      for (const key of keys.slice(0, -1)) {
        const next = at[key]
        if (typeof next !== 'object' || next === null) return copy
        at = next as Record<string, unknown>
      }
      Object.defineProperty(at, keys[keys.length - 1] as string, {
        value,
        enumerable: true,
        configurable: true,
        writable: true,
      })
      return copy
    })
const deep = fc
  .tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('[', '{"a":'), fc.boolean())
  .map(([depth, open, inMessage]) => {
    const nested = open.repeat(depth) + (open === '[' ? ']' : '1}').repeat(depth)
    return inMessage
      ? `{"model":"qwen3.8-27b-fp8","messages":[{"role":"user","content":${nested}}]}`
      : nested
  })
/** JSON text edited as raw characters: cut, spliced, numbers made long. */
const rawEdited = (valid: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(
      valid.map((b) => JSON.stringify(b)),
      fc.nat(),
      fc.constantFrom(
        '',
        '}',
        ']',
        '"',
        '\\',
        ',',
        '9'.repeat(400),
        '1e99999',
        '-',
        'null',
        '\\u0000',
        '\\ud800',
      ),
    )
    .map(
      ([text, at, insert]) =>
        text.slice(0, at % (text.length + 1)) + insert + text.slice(at % (text.length + 1)),
    )
const invalidUtf8 = (valid: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(
      valid.map((b) => new TextEncoder().encode(JSON.stringify(b))),
      fc.nat(),
      fc.constantFrom(
        [0xff],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xe2, 0x82],
        [0xf4, 0x90, 0x80, 0x80],
        [0xef, 0xbb, 0xbf],
      ),
    )
    .map(([bytes, at, bad]) => {
      const i = at % (bytes.length + 1)
      return new Uint8Array([...bytes.subarray(0, i), ...bad, ...bytes.subarray(i)])
    })
/** Bodies for one endpoint: mostly well-formed, then mutated, raw-edited, not UTF-8. */
const bodiesOf = (valid: fc.Arbitrary<Record<string, unknown>>) =>
  fc.oneof(
    { weight: 5, arbitrary: valid.map((b) => JSON.stringify(b)) },
    { weight: 3, arbitrary: mutatedBody(valid).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: rawEdited(valid) },
    { weight: 1, arbitrary: invalidUtf8(valid) },
  )
const hostileBody = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  deep,
  fc.string({ maxLength: 50 }),
  fc.constant(null),
)

/** Header values a runtime can deliver: Latin-1 without controls, some long. */
const headerText = fc.oneof(
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0xff }).map((code) => String.fromCharCode(code)),
    maxLength: 40,
  }),
  fc.constantFrom('', 'x'.repeat(9_000), '\u00ff\u00e9', '0', '-1', 'null', '%00'),
)
/** An optional header: absent four times in five. */
const sometimes = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value })
const headers = fc
  .record(
    {
      authorization: fc.oneof(
        { weight: 8, arbitrary: fc.constant('Bearer valid') },
        fc.constantFrom(
          '',
          'Bearer',
          'Bearer ',
          'bearer valid',
          'Basic abc',
          'Bearer kinf_demo_short',
          'Bearer kinf__x',
          `Bearer kinf_demo_${'A'.repeat(200)}`,
          'Bearer  valid',
          'Bearer valid valid',
        ),
        headerText.map((s) => `Bearer ${s}`),
      ),
      'content-type': sometimes(
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/json; charset=latin1',
          'multipart/form-data; boundary=x',
          '',
        ),
      ),
      'content-length': sometimes(
        fc.constantFrom('0', '1', '-1', 'abc', '99999999999', '1e3', ' 12'),
      ),
      'x-request-id': sometimes(headerText),
      'x-kinference-labels': sometimes(
        fc.oneof(fc.constantFrom('pii', 'pii,pii', ',', 'PII', 'a b'), headerText),
      ),
      'x-kinference-tenant': sometimes(headerText),
      traceparent: sometimes(headerText),
      'x-forwarded-for': sometimes(headerText),
    },
    { requiredKeys: ['authorization'] },
  )
  .map((record) =>
    Object.entries(record).flatMap(([name, value]): [string, string][] =>
      value === undefined
        ? []
        : [[name, name === 'authorization' ? value.replace('valid', () => demo.demoKey) : value]],
    ),
  )

const post = fc.oneof({ weight: 19, arbitrary: fc.constant('POST') }, fc.constant('PUT'))
const request: fc.Arbitrary<Case> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      method: post,
      path: fc.constant('/v1/chat/completions'),
      headers,
      body: bodiesOf(chatBody),
      scorer: scorerBehaviour,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      method: post,
      path: fc.constant('/v1/completions'),
      headers,
      body: bodiesOf(completionBody),
      scorer: scorerBehaviour,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      method: post,
      path: fc.constant('/v1/embeddings'),
      headers,
      body: bodiesOf(embeddingBody),
      scorer: scorerBehaviour,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      method: fc.constantFrom('POST', 'GET', 'PUT', 'HEAD', 'OPTIONS', 'DELETE'),
      path: fc.constantFrom(
        '/v1/chat/completions',
        '/v1/completions',
        '/v1/models',
        '/healthz',
        '/metrics',
        '/v1/chat/completions/',
        '/v1//completions',
        '/v1/chat/completions?x=1',
        '/%2e%2e/x',
        '/v1/embeddings',
      ),
      headers,
      body: hostileBody,
      scorer: scorerBehaviour,
    }),
  },
)

describe('fuzz: the edge’s request handling (createEdgeApp, in-process)', () => {
  // Found by the fuzzer: the edge built a Response with the scorer's status 600 and threw.
  it('regression: a scorer decision to reject with a status outside 400-599 is not taken', async () => {
    for (const status of [600, 200, 99]) {
      const input: Case = {
        method: 'POST',
        path: '/v1/completions',
        headers: [['authorization', `Bearer ${demo.demoKey}`]],
        body: '{"model":"qwen3.8-27b-fp8","prompt":"","constructor":1e308}',
        scorer: { kind: 'reject', status },
      }
      await answersCleanly(input)
      // Refused as no decision: the edge decides without the pools' status, as when the
      // scorer cannot be reached.
      const answered = await edgeAnswers(input)
      expect(answered?.logs).toContain(
        'scorer route failed: scorer route: an answer that is not a decision',
      )
    }
  })

  it(
    'answers every request with a success or an OpenAI-shaped error, never an internal 500',
    async () => {
      await fc.assert(fc.asyncProperty(request, answersCleanly), fuzzParameters(runs, 15_011))
    },
    fuzzTimeoutMs(runs) * 2,
  )
})
