import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type StatusSource,
  statusPageRoutes,
} from '../../../control-plane/status-page/status-page-routes.ts'
import type { DecisionView, StatusView } from '../../../control-plane/status-page/status-view.ts'

const token = 'ui-test-token-0123456789'
const status: StatusView = { generatedAtMs: 1, snapshot: null, pools: [], tenants: [] }
const decision = (id: string): DecisionView => ({
  id,
  atMs: 1,
  tenant: 't',
  rule: null,
  backend: null,
  pool: 'p',
  pod: 'a',
  strategy: 'kinference',
  matchedTokens: 16,
  predictedTtftMs: 40,
  actualTtftMs: null,
  cachedTokens: null,
  outputTokens: null,
  outcome: null,
})

/** Two decisions, then nothing until the client leaves. */
const source: StatusSource = {
  status: async () => status,
  async *decisions(signal) {
    yield decision('r1')
    yield decision('r2')
    await new Promise((resolve) => signal.addEventListener('abort', resolve))
  },
}

let server: Server | undefined
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
)

async function serve(adminToken: string | null): Promise<string> {
  const routes = statusPageRoutes({ adminToken, source })
  server = createServer(async (req, res) => {
    const handler = routes[`${req.method} ${(req.url ?? '').split('?')[0]}`]
    try {
      if (!handler) throw new Error('no route')
      await handler(req, res)
    } catch (error) {
      res.writeHead(401).end((error as Error).message)
    }
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('the status page routes', () => {
  it('trades ?token= for an HttpOnly cookie scoped to /ui, then serves the page and its API', async () => {
    const base = await serve(token)
    const login = await fetch(`${base}/ui?token=${token}`, { redirect: 'manual' })
    expect(login.status).toBe(303)
    expect(login.headers.get('location')).toBe('/ui')
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/)
    const page = await fetch(`${base}/ui`, { headers: { cookie } })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    const html = await page.text()
    expect(html).toContain('<script type="module" src="/ui/app.js">')
    expect(html).not.toMatch(/https?:\/\//)
    const script = await (await fetch(`${base}/ui/app.js`, { headers: { cookie } })).text()
    expect(script).toContain("new EventSource('/ui/api/decisions')")
    expect(script).not.toMatch(/^\s*import\s/m)
    const api = await fetch(`${base}/ui/api/status`, { headers: { cookie } })
    expect(await api.json()).toEqual(status)
  })

  it('refuses a wrong or missing token, and everything while no admin token is set', async () => {
    let base = await serve(token)
    for (const path of ['/ui', '/ui/app.js', '/ui/api/status', '/ui/api/decisions'])
      expect((await fetch(`${base}${path}`)).status).toBe(401)
    expect((await fetch(`${base}/ui?token=wrong`, { redirect: 'manual' })).status).toBe(401)
    await new Promise<void>((resolve) => server?.close(() => resolve()))
    base = await serve(null)
    const off = await fetch(`${base}/ui?token=${token}`, { redirect: 'manual' })
    expect(await off.text()).toContain('set KINFERENCE_ADMIN_TOKEN')
  })

  it('streams decisions as server-sent events', async () => {
    const base = await serve(token)
    const aborted = new AbortController()
    const response = await fetch(`${base}/ui/api/decisions`, {
      headers: { authorization: `Bearer ${token}` },
      signal: aborted.signal,
    })
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while ((text.match(/event: decision/g) ?? []).length < 2) {
      const { value } = await reader.read()
      text += new TextDecoder().decode(value)
    }
    aborted.abort()
    const events = text.split('\n\n').filter((block) => block.startsWith('event: decision'))
    expect(events.map((block) => JSON.parse(block.split('data: ')[1] ?? '').id)).toEqual([
      'r1',
      'r2',
    ])
  })
})
