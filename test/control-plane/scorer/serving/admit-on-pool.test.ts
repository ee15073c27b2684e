import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createScorerMetrics } from '../../../../control-plane/scorer/metrics/scorer-metrics.ts'
import { PoolRuntime } from '../../../../control-plane/scorer/pools/pool-runtime.ts'
import {
  admitOnPool,
  responseLink,
} from '../../../../control-plane/scorer/serving/admit-on-pool.ts'
import { TokenizerCache } from '../../../../control-plane/scorer/serving/tokenizer-cache.ts'
import { KinfError } from '../../../../shared/errors/kinf-error.ts'
import { createMemoryKvIndex } from '../../../../shared/kv-index/memory-kv-index.ts'
import { heldLookup } from '../../../support/one-pod-pool.ts'
import { poolSpec } from '../../../support/scorer-stack.ts'

// A rule's hold in the scorer (docs/service-levels.md §4): a request its pool's one pod
// cannot start waits until its hold ends; then, where its rule bursts and it may leave,
// it goes back to the edge (saturated: the next attempt is the provider), else 429.

function setup() {
  const pool = new PoolRuntime({
    name: 'default',
    // 256 blocks of 16 tokens: a second 3,000-token prompt cannot start.
    spec: poolSpec({ scheduler: { numGpuBlocks: 256 } } as never),
    index: createMemoryKvIndex(),
    tokenizers: new TokenizerCache(),
    onError: () => {},
  })
  pool.router.addPod('a', 0)
  pool.router.setIndexReady('a', true)
  const context = { metrics: createScorerMetrics(() => Date.now()) }
  const res = () => responseLink(new ServerResponse(new IncomingMessage(new Socket())))

  const admit = (id: string, allowBurst: boolean, burst: boolean) =>
    admitOnPool(
      context,
      { prepared: { pool }, lookup: heldLookup(id) },
      allowBurst,
      res(),
      { deadlineMs: performance.now() + 30 },
      burst,
    )
  return { pool, admit }
}

describe('admitOnPool with a rule’s hold', () => {
  it('hands a request held to the end of its hold back to the edge where its rule bursts', async () => {
    const { pool, admit } = setup()
    expect(await admit('r1', true, true)).toMatchObject({ route: { decision: { pod: 'a' } } })
    const handedBack = await admit('r2', true, true)
    expect(handedBack).toEqual({
      saturated: 'pool default could not start the request within its hold',
      heldMs: expect.any(Number),
    })
    // How long it was held, for its hold span.
    expect((handedBack as { heldMs: number }).heldMs).toBeGreaterThan(0)
    await pool.admission.close()
  })

  it('answers 429 slo_unattainable where the rule sheds, or the request may not leave', async () => {
    const { pool, admit } = setup()
    await admit('r1', true, true)
    for (const [allowBurst, burst] of [
      [true, false],
      [false, true],
    ] as const) {
      const error = await admit(`r-${allowBurst}-${burst}`, allowBurst, burst).catch((e) => e)
      expect(KinfError.isInstance(error) && error.openAiCode).toBe('slo_unattainable')
    }
    await pool.admission.close()
  })
})
