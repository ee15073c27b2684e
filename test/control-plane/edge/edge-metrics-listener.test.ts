import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge } from '../../../control-plane/edge/start-edge.ts'
import { parseEdgeOptions } from '../../../control-plane/kinfctl/commands/edge.ts'
import type { EmbeddedStack } from '../../../control-plane/lab/embedded/start-embedded.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { card, post, start } from '../../support/embedded-stack.ts'

/**
 * The Node edge's counters (requests, PII labels, bursts) say what tenants send: they are
 * served on a listener of their own, over real sockets here, and the public API port
 * answers /metrics as any unknown path.
 */
const model = 'qwen3.8-27b-fp8'

describe('the Node edge’s /metrics', () => {
  let stack: EmbeddedStack
  beforeAll(async () => {
    stack = await start()
  })
  afterAll(() => stack.close())

  it('is not served on the API port: 404 in OpenAI’s shape, as any unknown path', async () => {
    expect(stack.edge.metricsUrl).not.toBeNull()
    expect(new URL(stack.edge.metricsUrl ?? '').port).not.toBe(new URL(stack.edge.url).port)
    for (const method of ['GET', 'HEAD']) {
      const response = await fetch(`${stack.edge.url}/metrics`, { method })
      expect(response.status, method).toBe(404)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      if (method === 'GET')
        expect(await response.json()).toEqual({
          error: {
            message: 'no route for GET /metrics',
            type: 'invalid_request_error',
            param: null,
            code: 'unknown_url',
          },
        })
    }
    // /healthz stays on the API port: it says only "ok".
    const health = await fetch(`${stack.edge.url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.text()).toBe('ok')
  })

  it('is served by the metrics listener, with the counters of the API’s traffic', async () => {
    const answer = await post(stack, {
      model,
      messages: [{ role: 'user', content: card }],
      max_tokens: 4,
    })
    await answer.text()
    const response = await fetch(`${stack.edge.metricsUrl}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await response.text()
    expect(text).toMatch(/^kinference_edge_pii_detected_total\{label="[a-z-]+"\} [1-9]/m)
    expect(text).toMatch(/^kinference_edge_requests_total\{[^}]*\} [1-9]/m)
  })

  it('is all the metrics listener serves: other paths 404, other methods 405', async () => {
    const other = await fetch(`${stack.edge.metricsUrl}/v1/models`, {
      headers: { authorization: `Bearer ${stack.demoKey}` },
    })
    expect(other.status).toBe(404)
    expect(((await other.json()) as { error: { type: string } }).error.type).toBe(
      'invalid_request_error',
    )
    const posted = await fetch(`${stack.edge.metricsUrl}/metrics`, { method: 'POST', body: 'x' })
    expect(posted.status).toBe(405)
    expect(posted.headers.get('allow')).toBe('GET, HEAD')
  })
})

describe('the Node edge’s metrics listener, configured', () => {
  const base = {
    port: 0,
    config: async () => {
      throw new KinfError('internal', 'no config in this test')
    },
    scorerUrls: ['http://127.0.0.1:1'],
    signingSecret: 'edge-metrics-listener-secret',
    quotas: createMemoryQuotaStore(),
    log: () => {},
  }

  it('is off with metricsPort null: nothing serves /metrics', async () => {
    const edge = await startEdge({ ...base, metricsPort: null })
    try {
      expect(edge.metricsUrl).toBeNull()
      expect((await fetch(`${edge.url}/metrics`)).status).toBe(404)
    } finally {
      await edge.close()
    }
  })

  it('refuses a metrics port in use with a message naming it', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    try {
      await expect(startEdge({ ...base, metricsPort: port })).rejects.toThrow(
        `edge metrics: cannot listen on 127.0.0.1:${port}: the port is in use`,
      )
    } finally {
      taken.close()
    }
  })

  it('stops with the edge', async () => {
    const edge = await startEdge(base)
    const metricsUrl = edge.metricsUrl ?? ''
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(200)
    await edge.close()
    await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow()
  })
})

describe('kinfctl edge --metrics-port and --metrics-host', () => {
  const args = ['--scorer', 'http://127.0.0.1:1', '--config', 'x.json']
  const env = { KINFERENCE_SIGNING_SECRET: 'a-signing-secret-0123' }

  it('default to 9091 on 127.0.0.1, apart from the API’s 8787', () => {
    const options = parseEdgeOptions(args, env)
    expect(options).toMatchObject({ port: 8787, metricsPort: 9091, metricsHost: '127.0.0.1' })
  })

  it('take a port, 0 for a free one, or off', () => {
    const of = (value: string) =>
      parseEdgeOptions([...args, `--metrics-port=${value}`, '--metrics-host', '0.0.0.0'], env)
    expect(of('9400')).toMatchObject({ metricsPort: 9400, metricsHost: '0.0.0.0' })
    expect(of('0').metricsPort).toBe(0)
    expect(of('off').metricsPort).toBeNull()
    for (const bad of ['', 'on', '-1', '65536', '1.5'])
      expect(() => of(bad), bad).toThrow(/^--metrics-port must be a port number/)
  })
})
