import { connect, createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { scorerCommand } from '../../../../control-plane/kinfctl/commands/scorer.ts'
import { parsePrometheusText } from '../../../../control-plane/metrics/parse-prometheus-text.ts'
import { ScorerConfig } from '../../../../control-plane/scorer/scorer-config.ts'
import { startScorer } from '../../../../control-plane/scorer/start-scorer.ts'
import { startCommand } from '../../../support/run-cli.ts'
import { adminToken, model, poolSpec, send, until } from '../../../support/scorer-stack.ts'
import { useSharedStack } from '../../../support/use-scorer-stacks.ts'

/**
 * The scorer's /metrics and /health are on a listener of their own, over real sockets
 * here: its API port (the edge's, through the ingress path) answers both 404, as any
 * unknown path, and keeps the admin API and the status page.
 */
const notFound = (path: string) => ({
  error: {
    message: `no route for GET ${path}`,
    type: 'invalid_request_error',
    param: null,
    code: 'not_found',
  },
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.once('error', reject)
  })
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })

describe('the scorer’s /metrics and /health', () => {
  const stack = useSharedStack({ pods: 1 })

  it('are not served on the API port: 404 in OpenAI’s shape', async () => {
    expect(new URL(stack.scorer.metricsUrl ?? '').port).not.toBe(new URL(stack.scorer.url).port)
    for (const path of ['/metrics', '/health']) {
      const response = await fetch(`${stack.scorer.url}${path}`)
      expect(response.status, path).toBe(404)
      expect(await response.json()).toEqual(notFound(path))
    }
  })

  it('are served by the metrics listener, with the counters of the API’s traffic', async () => {
    const answer = await send(stack, '/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 3,
    })
    expect(answer.status).toBe(200)
    const metrics = await fetch(`${stack.scorer.metricsUrl}/metrics`)
    expect(metrics.status).toBe(200)
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const served = parsePrometheusText(await metrics.text()).samples.filter(
      (sample) => sample.name === 'kinference_scorer_e2e_seconds_count',
    )
    expect(served).toEqual([{ name: served[0]?.name, labels: { pool: 'default' }, value: 1 }])
    const health = await fetch(`${stack.scorer.metricsUrl}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
  })

  it('leave the admin API on the API port, and the metrics listener serves nothing else', async () => {
    const headers = { authorization: `Bearer ${adminToken}` }
    expect((await fetch(`${stack.scorer.url}/admin/pods`, { headers })).status).toBe(200)
    const elsewhere = await fetch(`${stack.scorer.metricsUrl}/admin/pods`, { headers })
    expect(elsewhere.status).toBe(404)
    expect(await elsewhere.json()).toEqual(notFound('/admin/pods'))
    const posted = await fetch(`${stack.scorer.metricsUrl}/health`, { method: 'POST' })
    expect(posted.status).toBe(405)
  })
})

describe('the scorer’s metrics listener, configured', () => {
  const config = (fields: Partial<Record<'port' | 'metricsPort', number | null>>) =>
    ScorerConfig.parse({
      port: 0,
      signingSecrets: ['scorer-metrics-listener-secret'],
      pools: [{ name: 'default', spec: poolSpec() }],
      ...fields,
    })

  it('is off with metricsPort null: neither path is served', async () => {
    const scorer = await startScorer(config({ metricsPort: null }), () => {})
    try {
      expect(scorer.metricsUrl).toBeNull()
      expect((await fetch(`${scorer.url}/health`)).status).toBe(404)
    } finally {
      await scorer.close()
    }
  })

  it('refuses a metrics port in use, and closes the API port it opened', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port: metricsPort } = taken.address() as { port: number }
    const port = await freePort()
    try {
      await expect(startScorer(config({ port, metricsPort }), () => {})).rejects.toThrow(
        `scorer metrics: cannot listen on 127.0.0.1:${metricsPort}: the port is in use`,
      )
      expect(await refused(port)).toBe(true)
    } finally {
      taken.close()
    }
  })
})

describe('kinfctl scorer --metrics-port', () => {
  /** The command in this process until `stop`, its first line once it listens. */
  async function run(args: string[]) {
    const scorer = startCommand(scorerCommand, ['--port', '0', '--allow-unsigned', ...args])
    await until(() => scorer.stdout().includes('listening on'))
    return { line: scorer.stdout(), stop: scorer.stop }
  }

  it('prints where /metrics and /health are, and serves them there', async () => {
    const scorer = await run(['--metrics-port', '0'])
    try {
      const match = / \(.*\); metrics (http:\/\/127\.0\.0\.1:\d+)\/metrics, \/health\n$/.exec(
        scorer.line,
      )
      expect(match, scorer.line).not.toBeNull()
      expect((await fetch(`${match?.[1]}/health`)).status).toBe(200)
      expect((await fetch(`${match?.[1]}/metrics`)).status).toBe(200)
    } finally {
      expect(await scorer.stop()).toBe(0)
    }
  })

  it('turns them off with off', async () => {
    const scorer = await run(['--metrics-port', 'off'])
    expect(scorer.line).toMatch(/\); metrics off\n$/)
    expect(await scorer.stop()).toBe(0)
  })

  it('refuses anything but a port or off', async () => {
    for (const bad of ['on', '65536', '1.5', '-1'])
      await expect(
        scorerCommand(['--port', '0', '--allow-unsigned', `--metrics-port=${bad}`], {
          stdout: () => {},
          stderr: () => {},
          readStdin: async () => '',
          untilInterrupted: () => new Promise<void>(() => {}),
          env: {},
        }),
        bad,
      ).rejects.toThrow(/--metrics-port ".+" must be a port number \(0 = a free one\) or off/)
  })
})
