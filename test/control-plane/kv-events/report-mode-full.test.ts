import { describe, expect, it } from 'vitest'
import { toPodEvents } from '../../../control-plane/kv-events/to-pod-events.ts'
import { wireEventMapper } from '../../../control-plane/lab/sim/to-wire-event.ts'
import { computeBlockKeys } from '../../../shared/kv-index/block-keys.ts'
import { createMemoryKvIndex } from '../../../shared/kv-index/memory-kv-index.ts'
import { createSeededRandom } from '../../../shared/random/create-seeded-random.ts'
import { drainEngine, engineRequest, range, simEngine } from '../../support/sim-engine.ts'

// vLLM's kv_cache_report_mode "full" (PR #45261) announces the blocks a request reuses
// again, with no removal of their own (docs/vllm-wire.md §1.10). Under eviction pressure
// the index must still hold exactly what the pod caches: before each request, the blocks
// the index credits the pod with are the blocks the pod then reports as cached. Counting
// every announcement would keep evicted blocks held, and credit the pod with them.

const model = 'm'

describe('an index fed by a pod in kv_cache_report_mode "full"', () => {
  it.each(['full', 'incremental'] as const)(
    'credits the pod with exactly the blocks it caches (%s), evictions included',
    async (reportMode) => {
      const engine = simEngine(2_048, 5, { reportMode })
      const toWire = wireEventMapper(engine.kvEvents)
      const index = createMemoryKvIndex()
      const random = createSeededRandom(11)
      const prefixes = Array.from({ length: 12 }, (_, i) => range(10_000 + 1_000 * i, 256))
      let now = 0
      let seq = 0n
      const mismatches: string[] = []
      let evicted = 0
      let reannounced = 0
      for (let n = 0; n < 80; n++) {
        const prefix = prefixes[Math.floor(random() * prefixes.length)] as number[]
        const prompt = [...prefix, ...range(50_000 + 64 * n, 40)]
        const keys = computeBlockKeys(prompt, 16, { model })
        const [credited] = await index.lookup(keys, ['pod'], now)
        engine.add({ ...engineRequest(`r${n}`, prompt, 2), arrivalMs: now })
        const run = drainEngine(engine, now)
        now = run.endMs
        const cached = run.steps.flatMap((step) => step.started)[0]?.numCachedTokens ?? -1
        if ((credited ?? 0) * 16 !== cached) mismatches.push(`r${n}: ${credited} vs ${cached}`)
        for (const step of run.steps) {
          const events = step.events.map(toWire)
          evicted += events.filter((event) => event.type === 'BlockRemoved').length
          reannounced += events.filter(
            (event) => event.type === 'BlockStored' && event.parentBlockHash === null,
          ).length
          if (events.length > 0) await index.apply('pod', model, toPodEvents(events).index, seq++)
        }
      }
      // The run did evict, and (in "full") announced reused prefixes again.
      expect(evicted).toBeGreaterThan(20)
      if (reportMode === 'full') expect(reannounced).toBeGreaterThan(40)
      expect(mismatches).toEqual([])
    },
  )
})
