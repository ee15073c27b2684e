import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type FakeBedrock,
  startFakeBedrock,
} from '../../control-plane/lab/bedrock-stand-in/start-fake-bedrock.ts'
import { demoSnapshot } from '../../control-plane/lab/embedded/demo-snapshot.ts'
import type { ConfigSnapshot } from '../../shared/config/config-snapshot.ts'
import { KinfError } from '../../shared/errors/kinf-error.ts'
import { createMemoryQuotaStore } from '../../shared/quota/memory-quota-store.ts'
import { mintApiKey, sha256HexOf } from '../../shared/tenancy/api-key.ts'
import { createEdgeApp } from '../../workers/app/edge-app.ts'
import { createEdgeMetrics } from '../../workers/app/edge-metrics.ts'
import { createExternalProviders } from '../../workers/app/external-providers.ts'
import { fuzzParameters, fuzzTimeoutMs } from '../support/fuzz-runs.ts'

/**
 * The promise of a PII-stays-local constraint, tried as an attacker would: each kind of
 * personal data, in each disguise real text uses or an attacker would try, in every field
 * the Converse request carries, sent to the demo's claude-sonnet (served only by Bedrock)
 * and, with the pool out of reach, as a burst of the local model. The Bedrock stand-in
 * records every call that arrived: none may carry the request. A control with harmless
 * text in the same places reaches it, so the fields are ones that do leave.
 */

const kinds = {
  card: '4111 1111 1111 1111',
  ssn: '219-09-9999',
  email: 'john.doe@example.com',
  phone: '+44 20 7946 0958',
  iban: 'DE89 3704 0044 0532 0130 00',
  ip: '203.0.113.195',
} as const
type Kind = keyof typeof kinds

const fullWidth = (text: string) =>
  text.replace(/[0-9A-Za-z@.]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))

/** Each disguise, as a function of the plain value; null where it does not apply to a kind. */
const disguises: Record<string, (value: string, kind: Kind) => string | null> = {
  plain: (v) => v,
  'no-break spaces': (v) => (v.includes(' ') ? v.replaceAll(' ', '\u00a0') : null),
  'narrow no-break spaces': (v) => (v.includes(' ') ? v.replaceAll(' ', '\u202f') : null),
  'full-width characters': (v) => fullWidth(v),
  'en dashes': (v, kind) =>
    kind === 'ssn'
      ? v.replaceAll('-', '\u2013')
      : kind === 'card'
        ? v.replaceAll(' ', '\u2013')
        : null,
  'zero-width spaces': (v) => [...v].join('\u200b'),
  dots: (v, kind) => (kind === 'card' || kind === 'ssn' ? v.replace(/[ -]/g, '.') : null),
  'soft hyphens and joiners': (v) => v.replace(/(.)(.)/g, '$1\u00ad$2\u2060'),
  base64: (v) => btoa(`the customer's details: ${v} (verified)`),
  'JSON escapes': (v) =>
    [...v].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  'percent escapes': (v) => encodeURIComponent(v).replace(/[0-9]/g, (d) => `%3${d}`),
}

type Body = Record<string, unknown>
const chat = (extra: Body): Body => ({ model: 'claude-sonnet', max_tokens: 16, ...extra })
const user = (content: unknown) => ({ role: 'user', content })
const weather = (extra: Body = {}) => ({
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    ...extra,
  },
})
const call = (id: string, args: string) => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }],
})

/**
 * Every place the Converse translation carries text from, as a body holding `text` there.
 * Splitting fields put half in each of two neighbours that Converse joins.
 */
const fields: Record<string, (text: string) => Body> = {
  'user content': (t) => chat({ messages: [user(`Please look at ${t} for me`)] }),
  'user text part': (t) => chat({ messages: [user([{ type: 'text', text: t }])] }),
  'system message': (t) => chat({ messages: [{ role: 'system', content: t }, user('hi')] }),
  'developer message': (t) => chat({ messages: [{ role: 'developer', content: t }, user('hi')] }),
  'assistant content': (t) =>
    chat({ messages: [user('hi'), { role: 'assistant', content: t }, user('go on')] }),
  'tool-call arguments': (t) =>
    chat({
      tools: [weather()],
      messages: [
        user('weather?'),
        call('call_1', `{"city":"${t.replaceAll('"', '\\"')}"}`),
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    }),
  'tool-call id': (t) =>
    chat({
      tools: [weather()],
      messages: [
        user('weather?'),
        call(t, '{"city":"Paris"}'),
        { role: 'tool', tool_call_id: t, content: 'sunny' },
      ],
    }),
  'tool result': (t) =>
    chat({
      tools: [weather()],
      messages: [
        user('weather?'),
        call('call_1', '{"city":"Paris"}'),
        { role: 'tool', tool_call_id: 'call_1', content: t },
      ],
    }),
  'tool description': (t) => chat({ tools: [weather({ description: t })], messages: [user('hi')] }),
  'parameter description': (t) =>
    chat({
      tools: [
        weather({
          parameters: { type: 'object', properties: { city: { type: 'string', description: t } } },
        }),
      ],
      messages: [user('hi')],
    }),
  'parameter enum': (t) =>
    chat({
      tools: [
        weather({
          parameters: {
            type: 'object',
            properties: { city: { type: 'string', enum: ['Paris', t] } },
          },
        }),
      ],
      messages: [user('hi')],
    }),
  'parameter name': (t) =>
    chat({
      tools: [weather({ parameters: { type: 'object', properties: { [t]: { type: 'string' } } } })],
      messages: [user('hi')],
    }),
  'stop sequence': (t) => chat({ stop: [t], messages: [user('hi')] }),
  'split over text parts': (t) =>
    chat({ messages: [user(halves(t).map((text) => ({ type: 'text', text })))] }),
  'split over system parts': (t) =>
    chat({
      messages: [
        { role: 'system', content: halves(t).map((text) => ({ type: 'text', text })) },
        user('hi'),
      ],
    }),
  'split over user turns': (t) => chat({ messages: halves(t).map((half) => user(half)) }),
  'split over system messages': (t) =>
    chat({
      messages: [...halves(t).map((half) => ({ role: 'system', content: half })), user('hi')],
    }),
}

/** Two pieces, cut in the middle: "4111 1111" and " 1111 1111". */
function halves(text: string): [string, string] {
  const at = Math.floor(text.length / 2)
  return [text.slice(0, at), text.slice(at)]
}

const cases = Object.entries(fields).flatMap(([field, place]) =>
  (Object.keys(kinds) as Kind[]).flatMap((kind) =>
    Object.entries(disguises).flatMap(([disguise, hide]) => {
      const text = hide(kinds[kind], kind)
      return text === null ? [] : [{ field, kind, disguise, body: place(text) }]
    }),
  ),
)

describe('personal data never reaches Bedrock under a PII-stays-local constraint', () => {
  let bedrock: FakeBedrock
  let snapshot: ConfigSnapshot
  let key = ''
  beforeAll(async () => {
    bedrock = await startFakeBedrock({ port: 0 })
    const minted = mintApiKey((n) => crypto.getRandomValues(new Uint8Array(n)), { id: 'demo' })
    // Thousands of requests a minute: the demo tenant's quotas would refuse most of them.
    snapshot = await demoSnapshot(bedrock.url, minted.id, await sha256HexOf(minted.secret), (r) => {
      if (r.kind === 'InferencePolicy') for (const tenant of r.spec.tenants) delete tenant.quotas
    })
    key = minted.key
  })
  afterAll(() => bedrock.close())

  /** The edge in-process, its scorer out of reach: the local model bursts to Bedrock. */
  const edge = () => {
    const app = createEdgeApp({
      config: async () => snapshot,
      quotas: createMemoryQuotaStore(),
      scorer: {
        route: () => Promise.reject(new KinfError('upstream_unavailable', 'scorer down')),
        forward: () => Promise.reject(new KinfError('upstream_unavailable', 'scorer down')),
      },
      external: createExternalProviders({
        credentials: () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
      }),
      metrics: createEdgeMetrics(),
      nowMs: () => Date.now(),
      sleep: async () => {},
      newRequestId: () => crypto.randomUUID(),
      log: () => {},
    })
    return (body: Body) =>
      app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
  }

  it(`covers ${cases.length} placements: every kind, disguise and field`, () => {
    expect(new Set(cases.map((c) => c.field)).size).toBe(Object.keys(fields).length)
    expect(new Set(cases.map((c) => c.kind)).size).toBe(Object.keys(kinds).length)
    expect(new Set(cases.map((c) => c.disguise)).size).toBe(Object.keys(disguises).length)
  })

  for (const model of ['claude-sonnet', 'qwen3.8-27b-fp8']) {
    it(`carries harmless text in every one of those fields to Bedrock, asking for ${model} (the control)`, async () => {
      const post = edge()
      for (const [field, place] of Object.entries(fields)) {
        const before = bedrock.requests.length
        // Each half of a split holds a "zebra".
        const response = await post({ ...place('zebra crossing and zebra stripes'), model })
        expect(response.status, `${field}: ${await response.clone().text()}`).toBe(200)
        const sent = JSON.stringify(bedrock.requests.slice(before).map((r) => r.body))
        expect(sent, field).toMatch(/zebra/)
      }
    })

    it(`keeps every placement from Bedrock, asking for ${model}`, async () => {
      const post = edge()
      const leaked: string[] = []
      for (const { field, kind, disguise, body } of cases) {
        const before = bedrock.requests.length
        const response = await post({ ...body, model })
        const { error } = (await response.json()) as { error?: { code?: string } }
        if (bedrock.requests.length !== before || error?.code !== 'locality_violation')
          leaked.push(`${kind} with ${disguise} in ${field}: ${response.status} ${error?.code}`)
      }
      expect(leaked).toEqual([])
    })
  }

  it(
    'keeps them out wherever the text sits among other words',
    async () => {
      const post = edge()
      const filler = fc.string({
        unit: fc.constantFrom('a', 'b', ' ', 'é', '\n', '-', '.', ','),
        maxLength: 40,
      })
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...cases),
          filler,
          filler,
          async (picked, before, after) => {
            const text = disguises[picked.disguise]?.(kinds[picked.kind], picked.kind)
            const body = fields[picked.field]?.(`${before} ${text} ${after}`)
            const sent = bedrock.requests.length
            const response = await post(body as Body)
            expect(
              bedrock.requests.length,
              `${picked.kind}/${picked.disguise}/${picked.field}`,
            ).toBe(sent)
            expect(response.status).not.toBe(200)
          },
        ),
        fuzzParameters(300, 22),
      )
    },
    fuzzTimeoutMs(300),
  )

  it('answers the refusal with the rule that held it and that retrying will not help', async () => {
    const response = await edge()(chat({ messages: [user(`card ${kinds.card}`)] }))
    expect(response.status).toBe(400)
    expect(response.headers.get('retry-after')).toBeNull()
    const { error } = (await response.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('locality_violation')
    expect(error.message).toContain('Constraint pii-in-cluster keeps this request in the cluster')
    expect(error.message).toContain('retrying will not help')
    expect(error.message).not.toContain('4111')
  })

  it('fails closed on what the scan cannot read: an image under the constraint stays local', async () => {
    const before = bedrock.requests.length
    const pixel =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=='
    const response = await edge()(
      chat({
        messages: [
          user([
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${pixel}` } },
          ]),
        ],
      }),
    )
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'cannot read (a content part of type image_url)',
    )
    expect(bedrock.requests.length).toBe(before)
  })
})
