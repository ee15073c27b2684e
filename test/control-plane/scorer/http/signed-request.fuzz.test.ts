import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type EdgeClaims,
  edgeHeaders,
  maxSkewSeconds,
  signEdgeRequest,
  verifyEdgeBody,
  verifyEdgeHeaders,
} from '../../../../shared/auth/edge-signature.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../../../support/fuzz-runs.ts'
import { model, secret } from '../../../support/scorer-stack.ts'
import { useSharedStack } from '../../../support/use-scorer-stacks.ts'

const runs = 3_000
const httpRuns = 300
const nowSeconds = 1_790_000_000
const encoder = new TextEncoder()

const word = fc.stringMatching(/^[a-z0-9-]{1,10}$/)
const claims: fc.Arbitrary<EdgeClaims> = fc.record(
  {
    tenant: word,
    labels: fc.uniqueArray(word, { maxLength: 3 }),
    backends: fc.uniqueArray(word, { maxLength: 3 }),
    allowBurst: fc.boolean(),
    detectorFailed: fc.boolean(),
    promptTokens: fc.nat(1_000_000),
    decidedBy: fc.record({ policy: word, rule: word }),
    requestId: fc.stringMatching(/^[\x21-\x7e]{1,128}$/),
  },
  { requiredKeys: ['tenant', 'labels', 'backends', 'allowBurst'] },
)
const signed = fc.record({
  claims,
  body: fc.oneof(fc.json({ maxDepth: 2 }), fc.string({ maxLength: 40 })),
  path: fc.constantFrom(
    '/v1/chat/completions',
    '/v1/completions',
    '/v1/kinference/route/completions',
  ),
  nonce: fc.uuid(),
})
type Signed = typeof signed extends fc.Arbitrary<infer T> ? T : never

/**
 * A change to one part of a signed request: a header's value (content-length among them),
 * the method, path or body.
 */
const mutation = fc.oneof(
  fc.record({
    part: fc.constant('header' as const),
    name: fc.constantFrom(...Object.values(edgeHeaders), 'content-length'),
    value: fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 12 }),
      fc.constantFrom(
        '',
        '0',
        '1',
        ' 1',
        'v4=',
        'v3=00',
        'v2=00',
        '0'.repeat(64),
        'x'.repeat(129),
        'id\u0085',
        'true',
        '-1',
        '1e3',
        ',',
        'a,,b',
        'x'.repeat(65),
      ),
    ),
  }),
  fc.record({
    part: fc.constant('signature-edit' as const),
    at: fc.nat(),
    char: fc.constantFrom('0', 'f', 'A', '', ' '),
  }),
  fc.record({
    part: fc.constant('timestamp-shift' as const),
    seconds: fc.integer({ min: -120, max: 120 }),
  }),
  fc.record({
    part: fc.constant('timestamp-respelled' as const),
    form: fc.constantFrom(' %', '%.0', '+%', '%e0', '0%', '%\t'),
  }),
  fc.record({ part: fc.constant('method' as const), value: fc.constantFrom('GET', 'post', 'PUT') }),
  fc.record({
    part: fc.constant('path' as const),
    value: fc.constantFrom(
      '/v1/completions',
      '/v1/chat/completions/',
      '/V1/chat/completions',
      '/v1/models',
    ),
  }),
  fc.record({ part: fc.constant('body' as const), at: fc.nat(), byte: fc.nat(255) }),
  fc.record({
    part: fc.constant('secret' as const),
    value: fc.constantFrom('another-secret-0123456789', `${secret} `, secret.slice(1)),
  }),
)
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never

interface Wire {
  method: string
  path: string
  body: Uint8Array
  headers: Record<string, string>
}

/** `input` signed, with the content-length HTTP sends it with. */
async function sign(input: Signed, signingSecret = secret, now = nowSeconds): Promise<Wire> {
  const body = encoder.encode(input.body)
  const signed = await signEdgeRequest(
    signingSecret,
    { method: 'POST', path: input.path, body: input.body, nonce: input.nonce },
    input.claims,
    now,
  )
  return {
    method: 'POST',
    path: input.path,
    body,
    headers: { ...signed, 'content-length': String(body.length) },
  }
}

/** `input` signed at `now`, then changed as `change` says. */
async function mutate(input: Signed, change: Mutation, now = nowSeconds): Promise<Wire> {
  const wire = await sign(input, change.part === 'secret' ? change.value : secret, now)
  const headers = { ...wire.headers }
  const stamp = headers[edgeHeaders.timestamp] ?? ''
  switch (change.part) {
    case 'header':
      if (change.value === undefined) delete headers[change.name]
      else headers[change.name] = change.value
      return { ...wire, headers }
    case 'signature-edit': {
      const value = headers[edgeHeaders.signature] ?? ''
      const at = change.at % (value.length + 1)
      headers[edgeHeaders.signature] = value.slice(0, at) + change.char + value.slice(at + 1)
      return { ...wire, headers }
    }
    case 'timestamp-shift':
      headers[edgeHeaders.timestamp] = String(Number(stamp) + change.seconds)
      return { ...wire, headers }
    case 'timestamp-respelled':
      headers[edgeHeaders.timestamp] = change.form.replace('%', stamp)
      return { ...wire, headers }
    case 'method':
      return { ...wire, method: change.value }
    case 'path':
      return { ...wire, path: change.value }
    case 'body': {
      const body = wire.body.length === 0 ? new Uint8Array([change.byte]) : wire.body.slice()
      const at = change.at % body.length
      if (wire.body.length > 0) body[at] = body[at] === change.byte ? change.byte ^ 1 : change.byte
      return { ...wire, body }
    }
    case 'secret':
      return wire
  }
}

/** As the scorer checks a request: its headers alone, then the body against them. */
async function verify(wire: Wire, now = nowSeconds) {
  const verified = await verifyEdgeHeaders(
    [secret],
    { method: wire.method, path: wire.path, headers: (name) => wire.headers[name] },
    now,
  )
  if (!verified.ok) return verified
  const body = await verifyEdgeBody(verified.body, wire.body)
  return body.ok ? verified : body
}

/** The claims as the scorer acts on them: lists as sets, absent flags as false. */
const meaning = (c: EdgeClaims) => ({
  tenant: c.tenant,
  labels: [...c.labels].sort(),
  backends: [...c.backends].sort(),
  allowBurst: c.allowBurst,
  detectorFailed: c.detectorFailed === true,
  promptTokens: c.promptTokens,
  decidedBy: c.decidedBy,
  requestId: c.requestId,
})

describe('fuzz: the scorer’s check of signed edge requests', () => {
  it(
    'accepts every request as signed, within the allowed skew',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          signed,
          fc.integer({ min: -maxSkewSeconds, max: maxSkewSeconds }),
          async (input, skew) => {
            const verified = await verify(await sign(input), nowSeconds + skew)
            expect(verified.ok).toBe(true)
            if (verified.ok) expect(meaning(verified.claims)).toEqual(meaning(input.claims))
          },
        ),
        fuzzParameters(runs, 15_021),
      )
    },
    fuzzTimeoutMs(runs),
  )

  it(
    'never accepts a mutated request as meaning anything but what was signed',
    async () => {
      await fc.assert(
        fc.asyncProperty(signed, mutation, async (input, change) => {
          const wire = await mutate(input, change)
          const verified = await verify(wire)
          if (!verified.ok) {
            expect(verified.reason.length).toBeGreaterThan(0)
            return
          }
          // Accepted: then nothing the scorer acts on changed (a header spelled another way
          // that reads the same, such as labels in another order).
          expect(meaning(verified.claims)).toEqual(meaning(input.claims))
          expect(verified.nonce).toBe(input.nonce)
          expect(wire.method.toUpperCase()).toBe('POST')
          expect(wire.path).toBe(input.path)
          expect(wire.body).toEqual(encoder.encode(input.body))
          expect(wire.headers['content-length']).toBe(String(wire.body.length))
          expect(wire.headers[edgeHeaders.timestamp]).toBe(String(nowSeconds))
        }),
        fuzzParameters(runs, 15_022),
      )
    },
    fuzzTimeoutMs(runs),
  )
})

describe('fuzz: the scorer’s HTTP path with mutated signed requests', () => {
  const stack = useSharedStack({ pods: 1 })

  /** fetch sends the body with its own content-length (a changed one is not sent). */
  const post = (wire: Wire) => {
    const { 'content-length': _, ...headers } = wire.headers
    return fetch(`${stack.scorer.url}${wire.path}`, {
      method: wire.method === 'post' ? 'POST' : wire.method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(wire.method === 'GET' ? {} : { body: wire.body }),
    })
  }

  it(
    'refuses every mutated request with a clear 4xx error in OpenAI’s shape',
    async () => {
      const request = signed.map((input) => ({
        ...input,
        body: JSON.stringify({
          model,
          max_tokens: 1,
          messages: [{ role: 'user', content: input.body }],
        }),
      }))
      await fc.assert(
        fc.asyncProperty(request, mutation, async (input, change) => {
          // Signed at the scorer's clock, then changed.
          const wire = await mutate(input, change, Math.floor(Date.now() / 1000))
          const response = await post(wire)
          const text = await response.text()
          // Accepted here too (same meaning; or a shift at the window's edge, where a second
          // passing decides): the scorer may serve it.
          const edge =
            change.part === 'timestamp-shift' &&
            Math.abs(Math.abs(change.seconds) - maxSkewSeconds) <= 2
          // HTTP drops a header value's outer blanks before the scorer reads it, and the
          // content-length is the body's (a GET has none).
          const delivered = {
            ...wire,
            headers: {
              ...Object.fromEntries(
                Object.entries(wire.headers).map(([name, value]) => [name, value.trim()]),
              ),
              'content-length': String(wire.method === 'GET' ? 0 : wire.body.length),
            },
          }
          if (edge || (await verify(delivered, Date.now() / 1000)).ok) return
          expect([400, 401, 404, 405, 413]).toContain(response.status)
          const { error } = JSON.parse(text) as { error: { message: string; type: string } }
          expect(error.message.length).toBeGreaterThan(0)
          expect(typeof error.type).toBe('string')
          // A request refused before its body was read leaves the connection closed behind it.
          if (response.status === 401) expect(response.headers.get('connection')).toBe('close')
        }),
        fuzzParameters(httpRuns, 15_023),
      )
    },
    fuzzTimeoutMs(httpRuns) * 2,
  )

  it('regression: tool-call arguments nested 5,000 deep are a 400 that says so, not a stack overflow', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`
    const body = JSON.stringify({
      model,
      max_tokens: 1,
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: deep } }],
        },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
      ],
    })
    const path = '/v1/chat/completions'
    const signedHeaders = await signEdgeRequest(
      secret,
      { method: 'POST', path, body, nonce: crypto.randomUUID() },
      { tenant: 't', labels: [], backends: [], allowBurst: false },
      Date.now() / 1000,
    )
    const response = await post({
      method: 'POST',
      path,
      body: encoder.encode(body),
      headers: signedHeaders,
    })
    // Before the fix: 400 "Maximum call stack size exceeded", the renderer's RangeError.
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('nested more than 1000 levels')
  })
})

describe('regressions the signature fuzzer found', () => {
  it('a timestamp or prompt estimate spelled otherwise than signed is refused', async () => {
    const input: Signed = {
      claims: { tenant: 't', labels: [], backends: [], allowBurst: false, promptTokens: 12 },
      body: '{}',
      path: '/v1/chat/completions',
      nonce: 'n-1',
    }
    const wire = await sign(input)
    expect((await verify(wire)).ok).toBe(true)
    const respelled = [
      [edgeHeaders.timestamp, ` ${nowSeconds}`],
      [edgeHeaders.timestamp, `${nowSeconds}.0`],
      [edgeHeaders.timestamp, `+${nowSeconds}`],
      [edgeHeaders.timestamp, `0${nowSeconds}`],
      [edgeHeaders.timestamp, `0x${nowSeconds.toString(16)}`],
      [edgeHeaders.promptTokens, '1.2e1'],
      [edgeHeaders.promptTokens, '012'],
      [edgeHeaders.promptTokens, '12.0'],
    ] as const
    for (const [name, value] of respelled) {
      const verified = await verify({ ...wire, headers: { ...wire.headers, [name]: value } })
      expect(verified.ok, `${name}: ${value}`).toBe(false)
    }
  })
})
