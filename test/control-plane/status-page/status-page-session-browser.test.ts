import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { statusPageRoutes } from '../../../control-plane/status-page/status-page-routes.ts'
import type { StatusView } from '../../../control-plane/status-page/status-view.ts'
import { type BrowserPage, openBrowserPage } from '../../support/browser-page.ts'

const token = 'ui-session-token-0123456789'
const ttlMs = 12 * 3600 * 1000
const status: StatusView = { generatedAtMs: 1, snapshot: null, pools: [], tenants: [] }

/**
 * The login as chromium lives it: the address with the token redirects to one without,
 * the browser keeps a session cookie that holds no token, the page works on it, and once
 * the session has expired (on the routes' clock) a reload shows how to log in again.
 */
describe('the status page session, in chromium', () => {
  const clock = { nowMs: 1_700_000_000_000 }
  let server: Server
  let base: string
  let browser: BrowserPage
  beforeAll(async () => {
    const routes = statusPageRoutes({
      adminToken: token,
      nowMs: () => clock.nowMs,
      source: {
        status: async () => status,
        async *decisions(signal) {
          await new Promise((resolve) => signal.addEventListener('abort', resolve))
        },
      },
    })
    server = createServer(async (req, res) => {
      const handler = routes[`${req.method} ${(req.url ?? '').split('?')[0]}`]
      try {
        if (handler) await handler(req, res)
        else res.writeHead(404).end()
      } catch (error) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify(error))
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await openBrowserPage()
  })
  afterAll(async () => {
    await browser?.close()
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
  })

  it('logs in once, keeps no token, and shows the login page once the session expired', async () => {
    const { page, problems } = browser
    await page.goto(`${base}/ui?token=${token}`)
    expect(page.url()).toBe(`${base}/ui`)
    await expect.poll(() => page.textContent('#snapshot')).not.toBe('…')
    expect(await page.textContent('#error')).toBe('')
    const cookies = await page.context().cookies()
    expect(cookies.map((c) => c.name)).toEqual(['kinference_session'])
    const [session] = cookies
    expect(session).toMatchObject({
      path: '/ui',
      httpOnly: true,
      sameSite: 'Strict',
      secure: false,
    })
    expect(session?.value).not.toContain(token)
    // HttpOnly: the page's script cannot read it.
    const readable = await page.evaluate(
      () => (globalThis as unknown as { document: { cookie: string } }).document.cookie,
    )
    expect(readable).toBe('')
    expect(problems, problems.join('\n')).toEqual([])

    clock.nowMs += ttlMs
    const expired = await page.reload()
    expect(expired?.status()).toBe(401)
    expect(await page.textContent('#why')).toContain('the session has expired')
    expect(await page.textContent('main')).toContain('/ui?token=')
  })
})
