import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddedStack } from '../../../../control-plane/lab/embedded/start-embedded.ts'
import { prepareRequest } from '../../../../control-plane/scorer/serving/prepare-request.ts'
import { mintApiKey, sha256HexOf } from '../../../../shared/tenancy/api-key.ts'
import { type CacheSalter, createCacheSalter } from '../../../../shared/tenancy/cache-salt.ts'
import { start } from '../../../support/embedded-stack.ts'

const model = 'qwen3.8-27b-fp8'
/** Two Isolated tenants (the default) and two that share their cache. */
const tenants = { acme: 'Isolated', globex: 'Isolated', sharera: 'Shared', sharerb: 'Shared' }
type TenantName = keyof typeof tenants

/** A system prompt of several thousand tokens, its own per test. */
function longPrompt(seed: string): string {
  return Array.from(
    { length: 700 },
    (_, i) => `Clause ${seed}-${i}: the parties agree on item ${(i * 7919) % 1000}.`,
  ).join(' ')
}

interface Answer {
  cached: number
  matched: number
  pod: string
  prompt: number
}

/**
 * Issue 15: a shared prefix cache is a timing side channel between tenants. Through the
 * embedded default (edge on Node, scorer, simulated vLLM pods whose prefix cache salts
 * its first block with cache_salt as vLLM does), two tenants with the same long prompt
 * share no cached tokens and no routing affinity, while each tenant's own requests do.
 */
describe('prefix-cache isolation between tenants, end to end', () => {
  let stack: EmbeddedStack
  let salt: CacheSalter
  const keys = {} as Record<TenantName, string>
  beforeAll(async () => {
    const hashes = {} as Record<TenantName, string>
    for (const name of Object.keys(tenants) as TenantName[]) {
      const minted = mintApiKey((n) => randomBytes(n), { id: name })
      keys[name] = minted.key
      hashes[name] = await sha256HexOf(minted.secret)
    }
    stack = await start({
      patch: (resource) => {
        if (resource.kind !== 'InferencePolicy') return
        const demo = resource.spec.tenants[0]
        if (!demo) throw new Error('the demo policy has no tenant')
        for (const [name, sharing] of Object.entries(tenants))
          resource.spec.tenants.push({
            ...structuredClone(demo),
            name,
            apiKeys: [{ id: name, sha256: hashes[name as TenantName] }],
            ...(sharing === 'Shared' ? { prefixCache: { sharing: 'Shared' as const } } : {}),
          })
      },
    })
    salt = createCacheSalter(stack.signingSecret)
  }, 60_000)
  afterAll(() => stack?.close())

  const ask = async (tenant: TenantName, prompt: string, extra: object = {}): Promise<Answer> => {
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys[tenant]}` },
      body: JSON.stringify({
        model,
        max_tokens: 2,
        messages: [
          { role: 'system', content: prompt },
          { role: 'user', content: 'Summarise the clauses.' },
        ],
        ...extra,
      }),
    })
    const text = await response.text()
    expect(response.status, text).toBe(200)
    const { usage } = JSON.parse(text) as {
      usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } }
    }
    const decision = response.headers.get('x-kinference-decision') ?? ''
    return {
      cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
      matched: Number(/matched_tokens=(\d+)/.exec(decision)?.[1] ?? Number.NaN),
      pod: /pod=([\w-]+)/.exec(decision)?.[1] ?? '',
      prompt: usage.prompt_tokens,
    }
  }

  /** Tokens of `prompt` the scorer's index holds on some pod under block keys salted so. */
  const indexed = async (prompt: string, cacheSalt: string | null) => {
    const pool = stack.scorer.pools.find((p) => p.name === 'sim-27b')
    if (!pool) throw new Error('no sim-27b pool')
    const body = {
      model,
      messages: [
        { role: 'system', content: prompt },
        { role: 'user', content: 'Summarise the clauses.' },
      ],
      ...(cacheSalt === null ? {} : { cache_salt: cacheSalt }),
    }
    const lookup = await pool.router.lookup(prepareRequest('probe', 'chat', body, [pool]).request)
    return Math.max(0, ...lookup.blocks.values()) * 16
  }
  /** KV events reach the index asynchronously: wait for the prompt's blocks. */
  const untilIndexed = (prompt: string, cacheSalt: string | null) =>
    expect
      .poll(() => indexed(prompt, cacheSalt), { timeout: 10_000, interval: 25 })
      .toBeGreaterThan(3_000)

  it('gives two Isolated tenants no cached tokens and no affinity of each other, and each its own', async () => {
    const prompt = longPrompt('isolated')
    const first = await ask('acme', prompt)
    expect(first.prompt).toBeGreaterThan(4_000)
    expect(first.cached).toBe(0)
    await untilIndexed(prompt, await salt('acme', null))
    // The scorer's block keys carry the tenant's salt: unsalted or another tenant's, nothing.
    expect(await indexed(prompt, null)).toBe(0)
    expect(await indexed(prompt, await salt('globex', null))).toBe(0)
    for (let i = 0; i < 3; i++) {
      const again = await ask('acme', prompt)
      expect(again.matched).toBeGreaterThan(3_000)
      expect(again.cached).toBeGreaterThan(3_000)
      expect(again.pod).toBe(first.pod)
    }
    const other = await ask('globex', prompt)
    expect(other.cached).toBe(0)
    expect(other.matched).toBe(0)
    await untilIndexed(prompt, await salt('globex', null))
    const otherAgain = await ask('globex', prompt)
    expect(otherAgain.cached).toBeGreaterThan(3_000)
    expect(otherAgain.matched).toBeGreaterThan(3_000)
  })

  it("does not let a client's own cache_salt reach another tenant's cache", async () => {
    const prompt = longPrompt('client-salt')
    expect((await ask('acme', prompt, { cache_salt: 'team-1' })).cached).toBe(0)
    await untilIndexed(prompt, await salt('acme', 'team-1'))
    expect((await ask('acme', prompt, { cache_salt: 'team-1' })).cached).toBeGreaterThan(3_000)
    // The same client salt, or even the salt acme's requests carry upstream: still nothing.
    for (const cacheSalt of ['team-1', await salt('acme', 'team-1')]) {
      const forged = await ask('globex', prompt, { cache_salt: cacheSalt })
      expect(forged.cached).toBe(0)
      expect(forged.matched).toBe(0)
    }
    // A Shared tenant's salt goes as sent: the same one names nothing of acme's either.
    const shared = await ask('sharera', prompt, { cache_salt: 'team-1' })
    expect(shared.cached).toBe(0)
    expect(shared.matched).toBe(0)
  })

  it('lets Shared tenants hit each other’s cache, and no Isolated tenant', async () => {
    const prompt = longPrompt('shared')
    const first = await ask('sharera', prompt)
    expect(first.cached).toBe(0)
    await untilIndexed(prompt, null)
    const second = await ask('sharerb', prompt)
    expect(second.cached).toBeGreaterThan(3_000)
    expect(second.matched).toBeGreaterThan(3_000)
    expect(second.pod).toBe(first.pod)
    const isolated = await ask('acme', prompt)
    expect(isolated.cached).toBe(0)
    expect(isolated.matched).toBe(0)
  })
})
