import { mkdir } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../control-plane/lab/embedded/start-embedded.ts'
import type { Decision } from '../../../shared/state/decision-entry.ts'
import type { PodState } from '../../../shared/state/pod-state.ts'
import type { QuotaUse } from '../../../shared/state/quota-use.ts'
import { type BrowserPage, openBrowserPage } from '../../support/browser-page.ts'
import { type EmbeddedOnRedis, startEmbeddedOnRedis } from '../../support/embedded-on-redis.ts'
import { post } from '../../support/embedded-stack.ts'
import { useRedisTestNamespaces } from '../../support/redis-test-namespaces.ts'

const { redis } = useRedisTestNamespaces()
/** Kept as the test's artifact (results/ is not committed). */
const screenshot = 'results/test-artifacts/status-page.png'
/** The page refreshes its status every 2 s (status-page-client.js). */
const pageRefresh = { timeout: 6_000 }

/**
 * The status page in a real browser (Debian's chromium, driven by playwright-core) against
 * the embedded default on Redis: every pod rendered, a request through the edge in the
 * decisions table within 2 s, the same numbers as `kinfctl inspect`, no console errors.
 */
describe('the status page, in chromium', () => {
  let running: EmbeddedOnRedis
  let stack: EmbeddedStack
  let browser: BrowserPage
  const inspect = <T>(...args: string[]) => running.inspectJson<T>(...args)
  const chat = async (question: string) => {
    const response = await post(stack, {
      model: 'qwen3.8-27b-fp8',
      stream: true,
      max_tokens: 4,
      messages: [{ role: 'user', content: question }],
    })
    expect(response.status).toBe(200)
    await response.text()
  }

  beforeAll(async () => {
    // A token budget slow enough to refill that the page and inspect both show it spent.
    running = await startEmbeddedOnRedis(redis, { requestsPerMinute: 60, tokensPerMinute: 200 })
    stack = running.stack
    await chat('warm up the pool')
    await stack.scorer.flushState()
    browser = await openBrowserPage()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await running?.close()
  })

  it('renders every pod, shows a request within 2 s, agrees with kinfctl inspect, logs no error', async () => {
    const { page, problems } = browser
    await page.goto(stack.statusPageUrl)
    // The token became a cookie; the address bar no longer holds it.
    expect(new URL(page.url()).search).toBe('')
    await expect
      .poll(() => page.locator('tr[data-pod]').count(), pageRefresh)
      .toBe(stack.pods.length)
    const shownPods = await page.$$eval('tr[data-pod]', (rows) =>
      rows.map((row) => row.getAttribute('data-pod')),
    )
    const { pods } = await inspect<{ pods: PodState[] }>('pods')
    expect(shownPods.sort()).toEqual(pods.map((p) => p.pod).sort())

    await chat('a question for the status page')
    const sentAt = performance.now()
    await stack.scorer.flushState()
    const { decisions } = await inspect<{ decisions: Decision[] }>('decisions')
    const last = decisions.at(-1) as Decision
    const row = page.locator(`tr[data-id="${last.requestId}"]`)
    await row.waitFor({ timeout: 2_000 })
    expect(performance.now() - sentAt).toBeLessThan(2_000)
    const cells = await row.locator('td').allTextContents()
    // time, request, tenant, rule, pool, pod, matched, predicted, actual, outcome
    expect(cells.slice(1, 7)).toEqual([
      last.requestId.slice(0, 8),
      last.tenant ?? '–',
      last.rule ?? '–',
      last.pool,
      last.pod,
      String(last.matchedTokens),
    ])
    expect(cells[7]).toBe(last.predictedTtftMs.toFixed(0))
    await expect.poll(() => row.locator('td').last().textContent(), pageRefresh).toBe('completed')
    expect(await page.textContent('#snapshot')).toContain(
      `config v${(await inspect<{ version: number }>('snapshot')).version} `,
    )
    // The pods' rows and the quotas as inspect reads them, once the page has refreshed.
    // The pods' KV events reach the index a moment after the answers.
    let held: PodState[] = []
    await expect
      .poll(async () => {
        await stack.scorer.flushState()
        const now = await inspect<{ pods: PodState[] }>('pods')
        held = now.pods.filter((p) => (p.blocksIndexed ?? 0) > 0)
        return held.length
      })
      .toBeGreaterThan(0)
    // The KV column operators read is the blocks the pod holds, labelled as such; vLLM's
    // kv_cache_usage (0% on an idle pod however much it caches) is beside it, labelled too.
    const headers = await page.locator('#pools table').first().locator('th').allTextContents()
    expect(headers.slice(1, 3)).toEqual(['KV blocks held (index)', 'KV in use (vLLM)'])
    for (const pod of held)
      await expect
        .poll(
          () => page.locator(`tr[data-pod="${pod.pod}"] td[data-col="kv-held"]`).textContent(),
          pageRefresh,
        )
        .toBe(String(pod.blocksIndexed))
    const { accounts } = await inspect<{ accounts: QuotaUse[] }>('tenants')
    const tokens = accounts.find((a) => a.account === 'demo')?.tokens
    expect(tokens?.available).toBeLessThan(tokens?.capacity ?? 0)
    const bucket = page.locator('#tenants tr[data-tenant="demo"]:has-text("tokens/min") td')
    await expect.poll(() => bucket.nth(3).textContent(), pageRefresh).toBe(String(tokens?.capacity))
    await expect
      .poll(async () => Number(await bucket.nth(2).textContent()), pageRefresh)
      .toBeGreaterThan(0)
    await page.waitForSelector('#chart circle')
    // The chart's axes carry their values: a tick at each power of ten, on both.
    const xTicks = await page.locator('#chart text.tick.x').allTextContents()
    const yTicks = await page.locator('#chart text.tick.y').allTextContents()
    expect(xTicks).toEqual(expect.arrayContaining(['100 ms', '1 s']))
    expect(yTicks).toEqual(xTicks)
    // What each trust means is on the page, "approximate" among them.
    const legend = (await page.textContent('#legend')) ?? ''
    expect(legend).toMatch(/approximate.*disagree by more than the pool's tolerance/s)
    expect(legend).toContain('load-only')
    expect(
      await page.locator('tr[data-pod] td[data-col="trust"] .trust').first().getAttribute('title'),
    ).toMatch(/index/)
    await mkdir('results/test-artifacts', { recursive: true })
    await page.screenshot({ path: screenshot, fullPage: true })
    expect(problems, problems.join('\n')).toEqual([])
  })

  it('asks a browser without a token for it, and the form opens the page', async () => {
    const fresh = await openBrowserPage()
    try {
      const { page, problems } = fresh
      const address = new URL(stack.statusPageUrl)
      const token = address.searchParams.get('token') ?? ''
      address.searchParams.delete('token')
      const response = await page.goto(address.toString())
      expect(response?.status()).toBe(401)
      expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8')
      await page.fill('input[name="token"]', token)
      await Promise.all([page.waitForURL(/\/ui$/), page.click('button[type="submit"]')])
      await expect
        .poll(() => page.locator('tr[data-pod]').count(), pageRefresh)
        .toBe(stack.pods.length)
      expect(page.url()).not.toContain(token)
      // The 401 of the first navigation is chromium's only console error.
      expect(problems.filter((p) => !p.includes('401'))).toEqual([])
    } finally {
      await fresh.close()
    }
  })
})
