import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import app from '../../workers/index.ts'

describe('edge worker', () => {
  it('answers health checks', async () => {
    const response = await app.request('/healthz')
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('ok')
  })

  it('answers unknown routes with an OpenAI-shaped 404', async () => {
    const response = await app.request('/v1/nothing', { method: 'POST' })
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({
      error: {
        message: 'no route for POST /v1/nothing',
        type: 'invalid_request_error',
        param: null,
        code: 'not_found',
      },
    })
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
