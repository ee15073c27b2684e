import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type StatusSource,
  statusPageRoutes,
} from '../../../control-plane/status-page/status-page-routes.ts'
import type { DecisionView, StatusView } from '../../../control-plane/status-page/status-view.ts'
import { KinfError } from '../../../shared/errors/kinf-error.ts'

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

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** The clock the routes' sessions expire by, moved by the tests. */
const clock = { nowMs: 1_700_000_000_000 }
const ttlMs = 12 * 3600 * 1000

/**
 * The routes on a real HTTP server, errors answered as the scorer's server does (the
 * error's status, its message as JSON).
 */
async function serve(adminToken: string | null, from: StatusSource = source): Promise<string> {
  const routes = statusPageRoutes({ adminToken, source: from, nowMs: () => clock.nowMs })
  const server = createServer(async (req, res) => {
    const handler = routes[`${req.method} ${(req.url ?? '').split('?')[0]}`]
    try {
      if (!handler) throw new KinfError('not_found', 'no route')
      await handler(req, res)
    } catch (error) {
      const failure = error as KinfError
      res.writeHead(failure.status ?? 500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: failure.message } }))
    }
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Logs in with ?token= and returns the Set-Cookie lines and the session's `name=value`. */
async function login(base: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/ui?token=${encodeURIComponent(token)}`, {
    redirect: 'manual',
    headers,
  })
  expect(response.status).toBe(303)
  const lines = response.headers.getSetCookie()
  const session = lines.find((line) => line.startsWith('kinference_session=')) ?? ''
  return { response, lines, session, cookie: session.split(';')[0] ?? '' }
}

const browser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }

describe('the status page routes', () => {
  beforeEach(() => {
    clock.nowMs = 1_700_000_000_000
  })

  it('trades ?token= for a session cookie without the token, then serves the page and its API', async () => {
    const base = await serve(token)
    const response = await fetch(`${base}/ui?token=${token}&pool=a`, { redirect: 'manual' })
    expect(response.status).toBe(303)
    // The address loses the token, and only the token.
    expect(response.headers.get('location')).toBe('/ui?pool=a')
    const { lines, session, cookie } = await login(base)
    expect(session).toMatch(
      /^kinference_session=[\w.-]+; Max-Age=43200; Path=\/ui; HttpOnly; SameSite=Strict$/,
    )
    // The cookie that held the raw token is cleared.
    expect(lines).toContain('kinference_admin=; Max-Age=0; Path=/ui; HttpOnly; SameSite=Strict')
    for (const line of lines) {
      expect(line).not.toContain(token)
      expect(line).not.toContain(encodeURIComponent(token))
    }
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

  it('marks the cookie Secure when the request came over HTTPS, as a proxy says', async () => {
    const base = await serve(token)
    for (const headers of [
      { 'x-forwarded-proto': 'https' } as Record<string, string>,
      { 'x-forwarded-proto': 'https, http' },
      { forwarded: 'for=10.0.0.1;proto=https;host=kinference.example' },
    ]) {
      const { lines } = await login(base, headers)
      for (const line of lines) expect(line).toMatch(/; Secure$/)
    }
    const { session } = await login(base, { 'x-forwarded-proto': 'http' })
    expect(session).not.toContain('Secure')
  })

  it('honours the session on every replica sharing the admin token, and on none after it changes', async () => {
    const [first, second, rotated] = [
      await serve(token),
      await serve(token),
      await serve(`${token}-rotated`),
    ]
    const { cookie } = await login(first)
    expect((await fetch(`${second}/ui/api/status`, { headers: { cookie } })).status).toBe(200)
    const refused = await fetch(`${rotated}/ui/api/status`, { headers: { cookie } })
    expect(refused.status).toBe(401)
  })

  it('ends a session at its expiry: the login page for a browser, the error for the API', async () => {
    const base = await serve(token)
    const { cookie } = await login(base)
    clock.nowMs += ttlMs - 1
    expect((await fetch(`${base}/ui/api/status`, { headers: { cookie } })).status).toBe(200)
    clock.nowMs += 1
    const api = await fetch(`${base}/ui/api/status`, { headers: { cookie } })
    expect(api.status).toBe(401)
    expect(((await api.json()) as { error: { message: string } }).error.message).toMatch(
      /session has expired/,
    )
    const page = await fetch(`${base}/ui`, { headers: { cookie, ...browser } })
    expect(page.status).toBe(401)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'",
    )
    const html = await page.text()
    expect(html).toContain('the session has expired')
    expect(html).toContain('<code>/ui?token=</code>')
    expect(html).toContain('lasts 12 hours')
    expect(html).not.toContain('<script')
    // Logging in again gives a new session from the moment of the login.
    const again = await login(base)
    expect((await fetch(`${base}/ui`, { headers: { cookie: again.cookie } })).status).toBe(200)
  })

  it('refuses a forged, malformed or token-holding cookie', async () => {
    const base = await serve(token)
    const { cookie } = await login(base)
    const [name, value] = cookie.split('=') as [string, string]
    const [version, expiry, id, mac] = value.split('.') as [string, string, string, string]
    const later = (Number.parseInt(expiry, 36) + 24 * 3600 * 1000).toString(36)
    for (const forged of [
      `${name}=${[version, later, id, mac].join('.')}`,
      `${name}=${[version, expiry, id, `${mac.slice(0, -1)}${mac.at(-1) === 'A' ? 'B' : 'A'}`].join('.')}`,
      `${name}=${token}`,
      `${name}=`,
      `${name}=v1.${'z'.repeat(40)}`,
      // What the page set before sessions: the raw admin token.
      `kinference_admin=${token}`,
    ]) {
      const api = await fetch(`${base}/ui/api/status`, { headers: { cookie: forged } })
      expect(api.status, forged).toBe(401)
      const page = await fetch(`${base}/ui`, { headers: { cookie: forged, ...browser } })
      expect(page.status, forged).toBe(401)
      expect(await page.text()).toContain('not signed in')
    }
  })

  it('takes the admin token as a bearer header: each API call, or once for a session', async () => {
    const base = await serve(token)
    const authorization = `Bearer ${token}`
    expect((await fetch(`${base}/ui/api/status`, { headers: { authorization } })).status).toBe(200)
    const page = await fetch(`${base}/ui`, { headers: { authorization } })
    expect(page.status).toBe(200)
    const session = page.headers
      .getSetCookie()
      .find((line) => line.startsWith('kinference_session='))
    const cookie = session?.split(';')[0] ?? ''
    expect(cookie).not.toContain(token)
    expect((await fetch(`${base}/ui/api/status`, { headers: { cookie } })).status).toBe(200)
    const wrong = { authorization: 'Bearer wrong', cookie }
    expect((await fetch(`${base}/ui/api/status`, { headers: wrong })).status).toBe(401)
  })

  it('refuses a wrong or missing token, and everything while no admin token is set', async () => {
    const base = await serve(token)
    for (const path of ['/ui', '/ui/app.js', '/ui/api/status', '/ui/api/decisions'])
      expect((await fetch(`${base}${path}`)).status).toBe(401)
    const wrong = await fetch(`${base}/ui?token=wrong`, { redirect: 'manual' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    const page = await fetch(`${base}/ui?token=wrong`, { redirect: 'manual', headers: browser })
    expect(page.status).toBe(401)
    expect(await page.text()).toContain('wrong token')
    const off = await fetch(`${await serve(null)}/ui?token=${token}`, { redirect: 'manual' })
    expect(off.status).toBe(403)
    expect(await off.text()).toContain('set KINFERENCE_ADMIN_TOKEN')
  })

  it('asks a browser without a token for it: an HTML form, posted to log in', async () => {
    const base = await serve(token)
    // A browser's navigation: a page, never the API's raw JSON.
    const page = await fetch(`${base}/ui`, { headers: browser })
    expect(page.status).toBe(401)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'")
    const html = await page.text()
    expect(html).toContain('<form method="post" action="/ui">')
    expect(html).toMatch(/<input id="token" name="token" type="password"/)
    expect(html).toContain('KINFERENCE_ADMIN_TOKEN')
    // An API client still gets JSON.
    const api = await fetch(`${base}/ui`)
    expect(api.status).toBe(401)
    expect(api.headers.get('content-type')).toBe('application/json')
    // The form as a browser posts it: a session, and the token in no address.
    const form = { ...browser, 'content-type': 'application/x-www-form-urlencoded' }
    const posted = await fetch(`${base}/ui`, {
      method: 'POST',
      headers: form,
      body: new URLSearchParams({ token }).toString(),
      redirect: 'manual',
    })
    expect(posted.status).toBe(303)
    expect(posted.headers.get('location')).toBe('/ui')
    const cookie = (posted.headers.getSetCookie()[0] ?? '').split(';')[0] ?? ''
    expect(cookie).toMatch(/^kinference_session=/)
    expect(cookie).not.toContain(token)
    expect((await fetch(`${base}/ui/api/status`, { headers: { cookie } })).status).toBe(200)
    const wrong = await fetch(`${base}/ui`, {
      method: 'POST',
      headers: form,
      body: 'token=wrong',
      redirect: 'manual',
    })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect(await wrong.text()).toContain('<form method="post" action="/ui">')
    // A trailing slash is the page too, and so is the scorer's address in a browser.
    const slash = await fetch(`${base}/ui/?pool=a`, { headers: browser, redirect: 'manual' })
    expect(slash.status).toBe(308)
    expect(slash.headers.get('location')).toBe('/ui?pool=a')
    const root = await fetch(`${base}/`, { headers: browser, redirect: 'manual' })
    expect(root.status).toBe(303)
    expect(root.headers.get('location')).toBe('/ui')
    const rootApi = await fetch(`${base}/`, { redirect: 'manual' })
    expect(rootApi.status).toBe(404)
    expect(rootApi.headers.get('content-type')).toBe('application/json')
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
    expect(eventIds(text)).toEqual(['r1', 'r2'])
  })

  it("ends a session's stream at the first decision after the session expired", async () => {
    const live = pushedSource()
    const base = await serve(token, live.source)
    const { cookie } = await login(base)
    const response = await fetch(`${base}/ui/api/decisions`, { headers: { cookie } })
    expect(response.status).toBe(200)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    live.push(decision('r1'))
    while (!text.includes('"r1"')) {
      const read = await reader.read()
      if (read.done) break
      text += new TextDecoder().decode(read.value)
    }
    clock.nowMs += ttlMs
    live.push(decision('r2'))
    for (let read = await reader.read(); !read.done; read = await reader.read())
      text += new TextDecoder().decode(read.value)
    expect(eventIds(text)).toEqual(['r1'])
    // EventSource's reconnection is refused.
    expect((await fetch(`${base}/ui/api/decisions`, { headers: { cookie } })).status).toBe(401)
  })
})

function eventIds(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: decision'))
    .map((block) => JSON.parse(block.split('data: ')[1] ?? '').id)
}

/** A source whose decisions the test pushes, one at a time. */
function pushedSource(): { source: StatusSource; push(decision: DecisionView): void } {
  const queue: DecisionView[] = []
  let wake = () => {}
  return {
    push(decision) {
      queue.push(decision)
      wake()
    },
    source: {
      status: async () => status,
      async *decisions(signal) {
        while (!signal.aborted) {
          const next = queue.shift()
          if (next !== undefined) yield next
          else
            await new Promise<void>((resolve) => {
              wake = resolve
              signal.addEventListener('abort', () => resolve(), { once: true })
            })
        }
      },
    },
  }
}
