import { describe, expect, it } from 'vitest'
import { parsePrometheusText } from '../../../control-plane/metrics/parse-prometheus-text.ts'
import worker from '../../../workers/worker/index.ts'

const token = 'a-metrics-token-of-some-length'
/** A fresh env object is a fresh isolate's app (index.ts keeps one per env). */
const isolate = (extra: object = {}) => ({
  SCORER_URL: 'http://127.0.0.1:9',
  KINFERENCE_SIGNING_SECRET: 'a-signing-secret-of-some-length',
  CONFIG: { get: async () => null },
  QUOTA_LEDGER: { idFromName: () => 0, get: () => ({}) },
  ...extra,
})
const call = (env: object, path: string, init: RequestInit = {}) =>
  worker.fetch(new Request(`http://edge${path}`, init), env, {})
const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } })

describe('the Worker’s /metrics', () => {
  it('is an unknown path while no METRICS_TOKEN is set', async () => {
    const response = await call(isolate(), '/metrics', bearer(token))
    expect(response.status).toBe(404)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unknown_url')
  })

  it('answers only the metrics token: 401 without it or with another', async () => {
    const env = isolate({ METRICS_TOKEN: token })
    for (const init of [{}, bearer('a-metrics-token-of-some-lengtH'), bearer(`${token}x`)]) {
      const response = await call(env, '/metrics', init)
      expect(response.status).toBe(401)
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe(
        'authentication_error',
      )
    }
    const posted = await call(env, '/metrics', { method: 'POST', ...bearer(token) })
    expect(posted.status).toBe(405)
    expect(posted.headers.get('allow')).toBe('GET, HEAD')
  })

  it('serves the isolate’s counters, the edge’s own errors included', async () => {
    const env = isolate({ METRICS_TOKEN: token })
    expect((await call(env, '/v1/nothing', { method: 'POST' })).status).toBe(404)
    // KV holds no snapshot: the edge answers 500 itself.
    expect((await call(env, '/v1/models', bearer('sk-whatever'))).status).toBe(500)
    const response = await call(env, '/metrics', bearer(token))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const parsed = parsePrometheusText(await response.text())
    expect(parsed.errors).toEqual([])
    const requests = parsed.samples
      .filter((sample) => sample.name === 'kinference_edge_requests_total')
      .map((sample) => ({ ...sample.labels, value: sample.value }))
    expect(requests).toEqual([
      { tenant: 'none', model: 'none', status: '404', value: 1 },
      { tenant: 'none', model: 'none', status: '500', value: 1 },
    ])
    // Another isolate counts from zero: what a scrape reads is the isolate it reached.
    const other = await call(isolate({ METRICS_TOKEN: token }), '/metrics', bearer(token))
    expect(await other.text()).not.toMatch(/^kinference_edge_requests_total\{/m)
  })

  it('refuses a METRICS_TOKEN too short to be a secret', async () => {
    const response = await call(isolate({ METRICS_TOKEN: 'short' }), '/v1/models')
    expect(response.status).toBe(500)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'METRICS_TOKEN',
    )
  })
})
