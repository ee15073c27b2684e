import { env } from 'cloudflare:workers'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { kvSnapshotKey } from '../../../shared/protocol/kv-snapshot-key.ts'
import worker from '../../../workers/worker/index.ts'
import type { CollectedRequest } from '../../support/otlp-collector.ts'
import type { WorkerdOtlpCollector } from '../../support/otlp-collector-global-setup.ts'
import type { RequestPathStack } from '../../support/request-path-stack.ts'

// Runs in workerd: the Worker's own fetch, with its vars, against the scorer and pods of the
// request-path stack and a real OTLP collector, all started in Node by the global setups.
const stack = JSON.parse(env.REQUEST_PATH_STACK as string) as RequestPathStack
const collector = JSON.parse(env.OTLP_COLLECTOR as string) as WorkerdOtlpCollector

/** The Worker's vars besides tracing: what wrangler.toml leaves to vars and secrets. */
const baseVars = { SCORER_URL: stack.scorerUrl, KINFERENCE_SIGNING_SECRET: stack.signingSecret }

/** What the collector has accepted so far, read over HTTP from Node. */
async function received(): Promise<CollectedRequest[]> {
  return (await (await fetch(collector.receivedUrl)).json()) as CollectedRequest[]
}

/**
 * One request through the Worker's fetch with `vars`, read to its end, and everything it
 * handed to waitUntil (the span export among it) settled, as the runtime lets it finish.
 */
async function send(vars: Record<string, string> | WorkerVars, body: object, headers = {}) {
  const pending: Promise<unknown>[] = []
  const ctx = { waitUntil: (work: Promise<unknown>) => void pending.push(work) }
  const response = await worker.fetch(
    new Request('https://edge.example/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.demoKey}`, ...headers },
      body: JSON.stringify(body),
    }),
    vars instanceof WorkerVars ? vars.env : new WorkerVars(vars).env,
    ctx,
  )
  const text = await response.text()
  for (let settled = 0; settled < pending.length; settled = pending.length)
    await Promise.allSettled(pending.slice(settled))
  return { response, text }
}

/** One env object: the Worker keeps an app, and its tracing, per env object (per isolate). */
class WorkerVars {
  readonly env: object
  constructor(vars: Record<string, string>) {
    this.env = { ...env, ...baseVars, ...vars }
  }
}

const chat = (extra: object = {}) => ({
  model: 'qwen3.8-27b-fp8',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 4,
  ignore_eos: true,
  ...extra,
})

/** A client's traceparent with a fresh trace id, so each test finds its own spans. */
function clientTrace() {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))]
      .map((byte) => byte.toString(16).padStart(2, '0'))
      .join('')
  const traceId = hex(16)
  const parentId = hex(8)
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` }
}

beforeAll(async () => {
  await (env.CONFIG as { put(key: string, value: string): Promise<void> }).put(
    kvSnapshotKey,
    stack.snapshot,
  )
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the Worker exports the edge spans over OTLP/HTTP', () => {
  it("sends a streamed chat request's server and stage spans, in one trace, to the collector", async () => {
    const trace = clientTrace()
    const { response, text } = await send(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`,
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      },
      chat({ stream: true, stream_options: { include_usage: true } }),
      { traceparent: trace.traceparent },
    )
    expect(response.status).toBe(200)
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    const requestId = response.headers.get('x-request-id')

    const exports = (await received()).filter((request) =>
      request.spans.some((span) => span.traceId === trace.traceId),
    )
    expect(exports.length).toBeGreaterThan(0)
    for (const request of exports) {
      expect(request.contentType).toBe('protobuf')
      expect(request.headers.authorization).toBe('Bearer collector-token')
      expect(request.headers['content-encoding']).toBe('gzip')
    }
    const spans = exports.flatMap((request) => request.spans)
    // Every span the Worker made for the request is in the client's trace.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([trace.traceId]))
    // The server span ends with the stream's last byte, after the Worker returned the
    // Response: it is exported because the export waits for the request's open spans.
    const server = spans.find((span) => span.kind === 2)
    expect(server).toMatchObject({
      name: 'POST /v1/chat/completions',
      parentSpanId: trace.parentId,
      serviceName: 'kinference-edge',
      scopeName: 'kinference',
      resourceAttributes: expect.objectContaining({ 'deployment.environment.name': 'test' }),
      attributes: expect.objectContaining({
        'kinference.stage': 'request',
        'kinference.request_id': requestId,
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'qwen3.8-27b-fp8',
        'gen_ai.usage.output_tokens': 4,
        'http.response.status_code': 200,
      }),
    })
    const stages = spans.filter((span) => span.parentSpanId === server?.spanId)
    expect(stages.map((span) => span.attributes['kinference.stage'])).toEqual(
      expect.arrayContaining(['auth', 'read', 'quota', 'policy']),
    )
  })

  it('sends nothing without an endpoint, or when OTEL_TRACES_EXPORTER is none', async () => {
    const before = (await received()).length
    const off = await send({}, chat())
    expect(off.response.status).toBe(200)
    const none = await send(
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_EXPORTER: 'none' },
      chat(),
    )
    expect(none.response.status).toBe(200)
    expect((await received()).length).toBe(before)
  })

  it('answers the request when the export fails, and warns once until one succeeds', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    const vars = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/nowhere` }
    const isolate = new WorkerVars({ ...vars, KINFERENCE_LOG_LEVEL: 'warn' })
    const first = await send(isolate, chat())
    const second = await send(isolate, chat())
    expect([first.response.status, second.response.status]).toEqual([200, 200])
    const warnings = lines
      .map((line) => JSON.parse(line) as { level: string; msg?: string; error?: string })
      .filter((line) => line.level === 'warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.error).toContain('404')
  })

  it('refuses tracing variables a Worker cannot honour, naming them', async () => {
    const { response, text } = await send(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_CERTIFICATE: '/etc/ssl/collector-ca.pem',
      },
      chat(),
    )
    expect(response.status).toBe(500)
    expect(text).toContain('OTEL_EXPORTER_OTLP_CERTIFICATE')
  })
})
