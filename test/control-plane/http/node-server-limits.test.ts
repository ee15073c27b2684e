import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge } from '../../../control-plane/edge/start-edge.ts'
import { ScorerConfig } from '../../../control-plane/scorer/scorer-config.ts'
import { type RunningScorer, startScorer } from '../../../control-plane/scorer/start-scorer.ts'
import { signEdgeRequest } from '../../../shared/auth/edge-signature.ts'
import type { ConfigSnapshot } from '../../../shared/config/config-snapshot.ts'
import { createMemoryQuotaStore } from '../../../shared/quota/memory-quota-store.ts'
import { startRequestPathStack } from '../../support/request-path-stack.ts'
import { poolSpec } from '../../support/scorer-stack.ts'

/** A raw client: what it was sent, whether the server closed it. */
interface RawClient {
  socket: Socket
  received: () => string
  closed: Promise<void>
}

function rawClient(url: string): Promise<RawClient> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve({ socket, received, closed }))
    let data = ''
    const received = () => data
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1')
    })
    const closed = new Promise<void>((done) => socket.once('close', () => done()))
    socket.once('error', reject)
  })
}

/** Writes `text` a byte at a time, every `everyMs`, until it is all out or the socket closes. */
async function trickle(client: RawClient, text: string, everyMs: number): Promise<void> {
  for (const byte of text) {
    if (client.socket.destroyed || client.socket.writableEnded) return
    client.socket.write(byte)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** Requests the scorer saw end because the edge went away. */
async function clientGone(): Promise<number> {
  const text = await (await fetch(`${stack.stack.scorerMetricsUrl}/metrics`)).text()
  return text
    .split('\n')
    .filter((line) => line.startsWith('kinference_scorer_requests') && line.includes('client-gone'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}

let stack: Awaited<ReturnType<typeof startRequestPathStack>>
let edge: Awaited<ReturnType<typeof startEdge>>
const logs: string[] = []

beforeAll(async () => {
  stack = await startRequestPathStack()
  const snapshot = JSON.parse(stack.stack.snapshot) as ConfigSnapshot
  edge = await startEdge({
    port: 0,
    config: async () => snapshot,
    scorerUrls: [stack.stack.scorerUrl],
    signingSecret: stack.stack.signingSecret,
    quotas: createMemoryQuotaStore(),
    log: (line) => logs.push(line),
    limits: { maxStreamSeconds: 2 },
    server: {
      headersTimeoutMs: 400,
      requestTimeoutMs: 800,
      keepAliveTimeoutMs: 300,
      maxConnectionsPerAddress: 4,
    },
  })
  // Four simulated pods (the demo's chat pool and its pooling pool), on a loaded CI machine.
}, 30_000)
afterAll(async () => {
  await edge?.close()
  await stack?.close()
})

const head = (extra = '') =>
  `POST /v1/chat/completions HTTP/1.1\r\nhost: edge\r\nauthorization: Bearer ${stack.stack.demoKey}\r\ncontent-type: application/json\r\n${extra}`

describe("the Node servers' limits, over real sockets", () => {
  it('answers headers sent a byte at a time with a 408 and closes after headersTimeout', async () => {
    const client = await rawClient(edge.url)
    // Never finishes on its own: 'x-slow: ' and a value longer than the test would last.
    void trickle(client, `${head()}x-slow: ${'y'.repeat(10_000)}`, 50)
    await client.closed
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /)
    expect(client.received()).toContain('"code":"request_timeout"')
  })

  it('cuts a body trickling in after requestTimeout', async () => {
    const client = await rawClient(edge.url)
    const body = JSON.stringify({
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'z'.repeat(5_000) }],
    })
    client.socket.write(`${head()}content-length: ${body.length}\r\n\r\n`)
    void trickle(client, body, 50)
    await client.closed
    expect(client.received()).toMatch(/^HTTP\/1\.1 408 /)
  })

  it('closes an idle keep-alive connection after keepAliveTimeout', async () => {
    const client = await rawClient(edge.url)
    client.socket.write('GET /healthz HTTP/1.1\r\nhost: edge\r\n\r\n')
    await client.closed
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 /)
  })

  it('answers headers past Node’s maxHeaderSize with an OpenAI-shaped 431', async () => {
    const client = await rawClient(edge.url)
    client.socket.write(`${head()}x-big: ${'b'.repeat(48 * 1024)}\r\n\r\n`)
    await client.closed
    expect(client.received()).toMatch(/^HTTP\/1\.1 431 /)
    expect(client.received()).toContain('"code":"request_header_fields_too_large"')
  })

  it('ends a stream its client does not read at maxStreamSeconds, cancelling upstream', async () => {
    const client = await rawClient(edge.url)
    client.socket.pause()
    const body = JSON.stringify({
      model: 'qwen3.8-27b-fp8',
      messages: [{ role: 'user', content: 'never read' }],
      max_tokens: 32_000,
      ignore_eos: true,
      stream: true,
    })
    client.socket.write(`${head()}content-length: ${body.length}\r\n\r\n${body}`)
    await expect
      .poll(() => logs.some((line) => line.includes('stream cut by the edge (duration)')), {
        timeout: 20_000,
      })
      .toBe(true)

    // The scorer saw the edge leave: the pod's request is stopped, not left to run.
    await expect.poll(clientGone, { timeout: 10_000 }).toBeGreaterThan(0)
    // Longer than requestTimeout: that limit covers receiving the request, not the answer.
    client.socket.resume()
    await expect.poll(() => client.received(), { timeout: 10_000 }).toContain('data: [DONE]')
    expect(client.received()).toContain('"code":"stream_duration_exceeded"')
    expect(client.received()).not.toContain('"finish_reason":"length"')
    client.socket.destroy()
  })

  it('closes connections from one address past maxConnectionsPerAddress', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => rawClient(edge.url)))
    const fifth = await rawClient(edge.url)
    await fifth.closed
    expect(fifth.received()).toBe('')
    // The four others are still served.
    const first = clients[0] as RawClient
    first.socket.write('GET /healthz HTTP/1.1\r\nhost: edge\r\n\r\n')
    await expect.poll(() => first.received()).toMatch(/^HTTP\/1\.1 200 /)
    // Last in this file: the server may see these close after the next test connects.
    for (const client of clients) client.socket.destroy()
  })
})

describe("the scorer's server limits", () => {
  let scorer: RunningScorer
  beforeAll(async () => {
    scorer = await startScorer(
      ScorerConfig.parse({
        port: 0,
        signingSecrets: ['scorer-limits-secret-0123456789'],
        pools: [{ name: 'default', spec: poolSpec() }],
        server: { headersTimeoutMs: 400, requestTimeoutMs: 800 },
      }),
      () => {},
    )
  })
  afterAll(() => scorer?.close())

  it('answers slow headers with a 408 and a trickled body is cut', async () => {
    const slow = await rawClient(scorer.url)
    void trickle(slow, `GET /health HTTP/1.1\r\nx-slow: ${'y'.repeat(10_000)}`, 50)
    await slow.closed
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /)
    // A body under signed headers (an unsigned one is refused before a byte is read).
    const payload = 'x'.repeat(5_000)
    const signed = await signEdgeRequest(
      'scorer-limits-secret-0123456789',
      { method: 'POST', path: '/v1/chat/completions', body: payload, nonce: crypto.randomUUID() },
      { tenant: 't', labels: [], backends: [], allowBurst: false },
      Date.now() / 1000,
    )
    const head = Object.entries(signed)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')
    const body = await rawClient(scorer.url)
    body.socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: s\r\ncontent-length: 5000\r\n${head}\r\n`,
    )
    void trickle(body, payload, 50)
    await body.closed
    expect(body.received()).toMatch(/^HTTP\/1\.1 408 /)
  })
})
