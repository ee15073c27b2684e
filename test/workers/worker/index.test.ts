import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import worker from '../../../workers/worker/index.ts'

const env = {
  SCORER_URL: 'http://127.0.0.1:9',
  KINFERENCE_SIGNING_SECRET: 'a-signing-secret-of-some-length',
  CONFIG: { get: async () => null },
  QUOTA_LEDGER: { idFromName: () => 0, get: () => ({}) },
}
const call = (path: string, on: object = env, init: RequestInit = {}) =>
  worker.fetch(new Request(`http://edge${path}`, init), on, {})

describe('edge worker', () => {
  it('answers health checks', async () => {
    const response = await call('/healthz')
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('ok')
  })

  it('answers unknown routes with an OpenAI-shaped 404', async () => {
    const response = await call('/v1/nothing', env, { method: 'POST' })
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({
      error: {
        message: 'no route for POST /v1/nothing',
        type: 'invalid_request_error',
        param: null,
        code: 'unknown_url',
      },
    })
  })

  it('names what is missing when its variables are wrong, and still answers health checks', async () => {
    const broken = { CONFIG: env.CONFIG, QUOTA_LEDGER: env.QUOTA_LEDGER }
    expect((await call('/healthz', broken)).status).toBe(200)
    const response = await call('/v1/models', broken)
    expect(response.status).toBe(500)
    const body = (await response.json()) as { error: { message: string } }
    expect(body.error.message).toContain('SCORER_URL')
    expect(body.error.message).toContain('KINFERENCE_SIGNING_SECRET')
  })

  it('refuses requests with a clear error while KV holds no snapshot', async () => {
    const response = await call('/v1/models', env, { headers: { authorization: 'Bearer x' } })
    expect(response.status).toBe(500)
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'no config snapshot in KV',
    )
  })

  it('bundles with wrangler for workerd', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'wrangler-'))
    await promisify(execFile)(
      'node_modules/.bin/wrangler',
      ['deploy', '--dry-run', '--outdir', outdir],
      {
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
      },
    )
    expect(readFileSync(join(outdir, 'index.js'), 'utf8')).toContain('healthz')
  })
})
