import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type StatusSource,
  statusPageRoutes,
} from '../../../control-plane/status-page/status-page-routes.ts'
import type { DecisionView, StatusView } from '../../../control-plane/status-page/status-view.ts'
import { type BrowserPage, openBrowserPage } from '../../support/browser-page.ts'

const token = 'ui-scale-token-0123456789'
const pools = 4
const podsPerPool = 25

/** A pool whose tokenizer cannot be loaded, its message with markup that must stay text. */
const tokenizerMissing: StatusView['pools'][number]['conditions'][number] = {
  type: 'TokenizerReady',
  status: 'False',
  reason: 'TokenizerUnavailable',
  message: 'tokenizer /models/<b>gone</b> (model m) cannot be loaded: no such directory',
  lastTransitionMs: Date.now() - 60_000,
  example: null,
}

/** 100 pods in 4 pools and 500 ended decisions: what a large pool's page holds at once. */
const status: StatusView = {
  generatedAtMs: Date.now(),
  snapshot: { version: 7, hash: `sha256:${'a'.repeat(64)}`, publishedAtMs: Date.now() },
  pools: Array.from({ length: pools }, (_, p) => ({
    name: `ns/pool-${p}`,
    strategy: 'kinference',
    conditions: p === 0 ? [tokenizerMissing] : [],
    pods: Array.from({ length: podsPerPool }, (_, i) => ({
      name: `pool-${p}-pod-${i}`,
      ready: i % 13 !== 0,
      trust: i % 7 === 0 ? 'approximate' : 'precise',
      drift: 0.02,
      kvCacheUsage: (i % 10) / 10,
      waiting: i % 4,
      running: 8 + (i % 5),
      blocksIndexed: 1000 + i,
      hitRate: 0.8,
      ttft: { overheadMs: 40, msPerToken: 0.14 },
      lastEventAgeMs: 120,
    })),
  })),
  tenants: Array.from({ length: 20 }, (_, t) => ({
    tenant: `tenant-${t}`,
    buckets: [{ name: 'tokens/min', used: 100 * t, limit: 10_000 }],
  })),
}
const decision = (i: number): DecisionView => ({
  id: `request-${String(i).padStart(4, '0')}`,
  atMs: Date.now(),
  tenant: `tenant-${i % 20}`,
  rule: 'local-then-bedrock',
  backend: null,
  pool: `ns/pool-${i % pools}`,
  pod: `pool-${i % pools}-pod-${i % podsPerPool}`,
  strategy: 'kinference',
  matchedTokens: 4096,
  predictedTtftMs: 50 + (i % 200),
  actualTtftMs: 45 + (i % 220),
  cachedTokens: 4096,
  outputTokens: 256,
  outcome: 'completed',
})
const source: StatusSource = {
  status: async () => status,
  async *decisions(signal) {
    for (let i = 0; i < 500; i++) yield decision(i)
    await new Promise((resolve) => signal.addEventListener('abort', resolve))
  },
}

describe('the status page at 100 pods, in chromium', () => {
  let server: Server
  let base: string
  let browser: BrowserPage
  beforeAll(async () => {
    const routes = statusPageRoutes({ adminToken: token, source })
    server = createServer(async (req, res) => {
      const handler = routes[`${req.method} ${(req.url ?? '').split('?')[0]}`]
      if (handler) await handler(req, res)
      else res.writeHead(404).end()
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

  it('renders every pod, the newest 200 decisions and 500 points, with no console error', async () => {
    const { page, problems } = browser
    await page.goto(`${base}/ui?token=${token}`)
    await expect.poll(() => page.locator('tr[data-pod]').count()).toBe(pools * podsPerPool)
    await expect.poll(() => page.locator('#decisions tr').count()).toBe(200)
    await expect.poll(() => page.locator('#chart circle').count()).toBe(500)
    expect(await page.locator('#decisions tr').first().getAttribute('data-id')).toBe('request-0499')
    const marked = page.locator('p.condition[data-condition="TokenizerReady"]')
    expect(await marked.count()).toBe(1)
    expect(await marked.textContent()).toContain(
      'TokenizerReady False (TokenizerUnavailable, since',
    )
    expect(await marked.textContent()).toContain('tokenizer /models/<b>gone</b> (model m)')
    expect(problems, problems.join('\n')).toEqual([])
  })
})
