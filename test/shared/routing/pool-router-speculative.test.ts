import { describe, expect, it } from 'vitest'
import type { RoutingSpecInput } from '../../../shared/crd/routing-spec.ts'
import { routerSettings } from '../../../shared/routing/pool-options.ts'
import { recordingPoolRouter, poolSpec as spec } from '../../support/recording-pool-router.ts'

const ids = Array.from({ length: 640 }, (_, i) => 1000 + i * 31)

/** Routes one request at 0 on a pool routed as `routing` says. */
async function routeOne(routing: RoutingSpecInput) {
  const pool = recordingPoolRouter(routing)
  const request = pool.router.prepare({
    id: 'r',
    model: 'm',
    promptIds: ids,
    maxTokens: 8,
    cacheSalt: null,
    promptText: () => 'x'.repeat(2_560),
  })
  const route = pool.router.dispatchNow(await pool.router.lookup(request), 0)
  expect(route.decision.pod).not.toBeNull()
  return { ...pool, route, pod: route.decision.pod as string }
}

/** The pods the pool wrote speculative entries for, routing one request. */
async function speculativeWrites(routing: RoutingSpecInput): Promise<string[]> {
  return (await routeOne(routing)).writes.map((write) => write.pod)
}

describe('speculative entries per strategy', () => {
  it('are written for kinference, for 2 s unless the pool says otherwise', async () => {
    expect(routerSettings(spec({ strategy: 'kinference' })).speculativeTtlMs).toBe(2_000)
    expect(await speculativeWrites({ strategy: 'kinference' })).toHaveLength(1)
  })

  it('are not written for Dynamo or llm-d as deployed', async () => {
    for (const strategy of ['dynamo', 'llmd-sticky'] as const) {
      expect(routerSettings(spec({ strategy })).speculativeTtlMs).toBeNull()
      expect(await speculativeWrites({ strategy })).toEqual([])
    }
  })

  it('are written for their variants that switch them on', async () => {
    const dynamo: RoutingSpecInput = { strategy: 'dynamo', dynamo: { speculativeEntries: true } }
    const sticky: RoutingSpecInput = {
      strategy: 'llmd-sticky',
      llmdSticky: { prefixProducer: 'precise', speculativeIndexing: true },
    }
    for (const routing of [dynamo, sticky]) {
      expect(routerSettings(spec(routing)).speculativeTtlMs).toBe(2_000)
      expect(await speculativeWrites(routing)).toHaveLength(1)
    }
  })
})

describe('a speculative entry’s life', () => {
  /** One request at 0 on a dynamo pool with speculative entries (a fixed 2-s TTL). */
  async function routed() {
    const { router, writes, pod, route, setNow } = await routeOne({
      strategy: 'dynamo',
      dynamo: { speculativeEntries: true },
    })
    const written = () => writes.map(({ pod, expiresAtMs }) => ({ pod, expiresAtMs }))
    return {
      router,
      written,
      pod,
      predicted: route.predictedTtftMs.get(pod) as number,
      at: setNow,
    }
  }

  it('covers the predicted wait for the first token, then the TTL', async () => {
    const { written, pod, predicted } = await routed()
    expect(predicted).toBeGreaterThan(0)
    expect(written()).toEqual([{ pod, expiresAtMs: predicted + 2_000 }])
  })

  it('is renewed from the first token, however long the request queued', async () => {
    const { router, written, pod, at } = await routed()
    at(9_000)
    router.firstToken('r', 9_000)
    expect(written().at(-1)).toEqual({ pod, expiresAtMs: 11_000 })
    // Once, at the first token: later tokens and the end write nothing.
    router.progress('r', 4)
    router.finished('r', 9_500, 0)
    expect(written()).toHaveLength(2)
  })

  it('is not renewed for a request that failed before its first token', async () => {
    const { router, written } = await routed()
    router.failed('r', 500, false)
    router.firstToken('r', 600)
    expect(written()).toHaveLength(1)
  })
})
